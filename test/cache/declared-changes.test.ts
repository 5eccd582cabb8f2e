import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { TOLD_BY_EVENTS } from '../../src/domain/changes.js';
import { type DomainEvent, petChanged } from '../../src/domain/events.js';
import { EVERYTHING, writeTags } from '../../src/http/dependency-tags/tags.js';
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
    // A rename is told by its event, which names the category it is in: that category's name-ordered pages.
    const renamed = petChanged({ id: 7n, name: 'Rex', categoryId: 3n, status: 'available' }, ['name']);
    expect(tagsOf('mutation { updatePet(id: "7", input: { name: "Rex" }) { id } }', undefined, [renamed])).toEqual(
      ['*:write', 'Pet:7', 'Pet:any', 'Pet:list:name', 'Pet:list:name@categoryId=3'].sort(),
    );
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
});
