import {
  getNamedType,
  getNullableType,
  type GraphQLNamedType,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  isEnumType,
  isInputObjectType,
  isListType,
  isObjectType,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { TOLD_BY_EVENTS } from '../../src/domain/changes.js';
import { type DomainEvent, inventoryChanged, petChanged } from '../../src/domain/events.js';
import { answerTags, EVERYTHING, MOVES_NO_LIST, RANKED_ROWS, withUntoldRanks, writeTags } from '../../src/http/dependency-tags/tags.js';
import { pageSize } from '../../src/pothos-plugins/paging.js';
import { schema } from '../../src/schema/index.js';

/**
 * What a mutation changes is declared beside it in the schema (`plannedWrite(changes, …)` in
 * src/schema/*.ts); the response cache reads nothing else to know what a write
 * outdates. A mutation added without a declaration would outdate every answer
 * at each call: this fails first, naming it.
 */
describe('what each mutation changes', () => {
  const mutations = Object.values(schema.getMutationType()!.getFields());

  it.each(mutations.map((field) => [field.name, field] as const))('%s declares what it changes', (_name, field) => {
    const declared = field.extensions.changes;
    expect(declared === TOLD_BY_EVENTS || typeof declared === 'function', `${field.name} declares no changes`).toBe(true);
  });

  it('a mutation that declares nothing outdates every answer', () => {
    const undeclared = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { a: { type: GraphQLString } } }),
      mutation: new GraphQLObjectType({ name: 'Mutation', fields: { renameEverything: { type: GraphQLString } } }),
    });
    expect(writeTags(undeclared, parse('mutation { renameEverything }'), undefined, undefined, [])).toContain(EVERYTHING);
  });

  it('the declarations give the narrow tags the cache relies on', () => {
    const tagsOf = (document: string, variables?: Record<string, unknown>, events: DomainEvent[] = []) =>
      [...writeTags(schema, parse(document), undefined, variables, events)].sort();
    // A rename is told by its event, which names the category it is in: that category's name-ordered
    // pages, and its first pages where it landed among their rows (of the category, of its status).
    const rename = 'mutation { updatePet(id: "7", input: { name: "Rex" }) { id } }';
    const renamedTo = (inCategory: number, inStatus: number) =>
      tagsOf(rename, undefined, [petChanged({ id: 7n, name: 'Rex', categoryId: 3n, status: 'available' }, ['name'], { inCategory, inStatus })]);
    const renamed = ['*:write', 'Pet:7', 'Pet:any', 'Pet:list:name', 'Pet:list:name@categoryId=3', 'Pet:list:name@categoryId=3#ranked'];
    expect(renamedTo(100, 100)).toEqual(renamed.sort());
    expect(renamedTo(100, 99)).toEqual([...renamed, 'Pet:list:name@categoryId=3@status=available#first'].sort());
    expect(renamedTo(5, 2)).toEqual([...renamed, 'Pet:list:name@categoryId=3#first', 'Pet:list:name@categoryId=3@status=available#first'].sort());
    // One that does not say where it landed: every first page of its category.
    const untold = tagsOf(rename, undefined, [petChanged({ id: 7n, name: 'Rex', categoryId: 3n, status: 'available' }, ['name'])]);
    const everyFirstPage = ['#first', '@status=available#first', '@status=pending#first', '@status=sold#first'].map((end) => `Pet:list:name@categoryId=3${end}`);
    expect(untold).toEqual(['*:write', 'Pet:7', 'Pet:any', 'Pet:list:name', 'Pet:list:name@categoryId=3', ...everyFirstPage].sort());
    // Nor does a rename written by an instance of an earlier version, read from the shared log or the event bus.
    const older = ['*:write', 'Pet:7', 'Pet:any', 'Pet:list:name', 'Pet:list:name@categoryId=3'];
    expect([...withUntoldRanks(older)].sort()).toEqual([...older, ...everyFirstPage].sort());
    expect(withUntoldRanks(renamed)).toEqual(renamed);
    // A stock count outdates the lists of entries only when it moved the entry's status, or made it.
    const stock = 'mutation { updateInventory(petId: "1", input: { quantity: 3 }) { quantity } }';
    expect(tagsOf(stock, undefined, [inventoryChanged(1n, 3, 'available', 'available')])).toEqual(['*:write', 'InventoryItem:1', 'InventoryItem:any']);
    expect(tagsOf(stock, undefined, [inventoryChanged(1n, 0, 'sold', 'available')])).toContain('InventoryItem:list');
    expect(tagsOf(stock, undefined, [inventoryChanged(1n, 3, 'available', null)])).toContain('InventoryItem:list');
    // A move outdates every list of pets.
    const moved = petChanged({ id: 7n, name: 'Rex', categoryId: 4n, status: 'available' }, ['categoryId']);
    expect(tagsOf('mutation { updatePet(id: "7", input: { categoryId: "4" }) { id } }', undefined, [moved])).toEqual(
      ['*:write', 'Pet:7', 'Pet:any', 'Pet:list'].sort(),
    );
    expect(tagsOf('mutation ($id: ID!) { deleteCategory(id: $id) { id } }', { id: '3' })).toEqual(
      ['*:write', 'Category:3', 'Category:any', 'Category:list'].sort(),
    );
    // Told by its events: its arguments alone outdate nothing.
    expect(tagsOf('mutation { placeOrder(input: { petId: "1", quantity: 1 }) { id } }')).toEqual(['*:write']);
  });
  it('no list is ordered or filtered by a field whose change is said to move no row in a list', () => {
    // What each list's arguments can name: its filter's fields, its order's fields, at any depth.
    const named = (type: GraphQLNamedType, seen = new Set<string>()): string[] => {
      if (seen.has(type.name)) return [];
      seen.add(type.name);
      if (isEnumType(type)) return type.getValues().map((value) => String(value.value));
      if (!isInputObjectType(type)) return [];
      return Object.values(type.getFields()).flatMap((field) => [field.name, ...named(getNamedType(field.type), seen)]);
    };
    const lists: Array<[string, string, string[]]> = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const returned = getNamedType(field.type);
        const item = isObjectType(returned) && returned.getFields().nodes ? getNamedType(returned.getFields().nodes!.type) : isListType(getNullableType(field.type)) ? returned : undefined;
        if (!item || !MOVES_NO_LIST[item.name]) continue;
        lists.push([`${type.name}.${field.name}`, item.name, field.args.flatMap((arg) => [arg.name, ...named(getNamedType(arg.type))])]);
      }
    }
    expect(lists.map(([list]) => list)).toEqual(expect.arrayContaining(['Query.pets', 'Query.inventory', 'Query.categories', 'Category.pets']));
    for (const [list, item, names] of lists) {
      // A pet's name orders and narrows its lists: its renames have tags of their own (firstPagesTag and the lists by name).
      const unlisted = [...MOVES_NO_LIST[item]!].filter((field) => !(item === 'Pet' && field === 'name'));
      expect(names.filter((name) => unlisted.includes(name)), list).toEqual([]);
    }
    // A first page holds at most pageSize.max rows: update_pet tells how far down a rename landed up to that many.
    expect(RANKED_ROWS).toBeGreaterThanOrEqual(pageSize.max);
  });
});

describe('what an answer depends on', () => {
  const tagsOf = (document: string, data: unknown) => answerTags(schema, parse(document), undefined, undefined, data);

  it('each pet by its id wherever the selection puts it, and any pet where it does not select it', () => {
    const aliased = tagsOf('{ pets(first: 2) { nodes { pid: id name } } }', { pets: { nodes: [{ pid: '1', name: 'Rex' }, { pid: '2', name: 'Tom' }] } });
    expect([...aliased]).toEqual(expect.arrayContaining(['Pet:1', 'Pet:2', 'Pet:list']));
    expect(aliased).not.toContain('Pet:any');
    // `id` naming another field: not an id, so the pets are not named.
    const misnamed = tagsOf('{ pets(first: 1) { nodes { id: name } } }', { pets: { nodes: [{ id: 'Rex' }] } });
    expect(misnamed).toContain('Pet:any');
    expect(misnamed).not.toContain('Pet:Rex');
    // A first page by name depends on the renames that land among its rows; another page, on every rename in its category.
    expect(tagsOf('{ pets(filter: { categoryId: "3", status: SOLD }, orderBy: { field: NAME }) { nodes { id } } }', { pets: { nodes: [] } })).toContain(
      'Pet:list:name@categoryId=3@status=sold#first',
    );
    expect(tagsOf('{ pets(last: 5, filter: { categoryId: "3" }, orderBy: { field: NAME }) { nodes { id } } }', { pets: { nodes: [] } })).toContain(
      'Pet:list:name@categoryId=3',
    );
  });
});
