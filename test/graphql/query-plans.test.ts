import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatPrismaCursor } from '@pothos/plugin-prisma';
import { scopes as allScopeNames } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { postGraphQL } from '../support/http.js';
import { testToken } from '../support/tokens.js';

/**
 * Query plans answer exactly as graphql-js does, errors included. Every test
 * gateway's queries are also answered by a reference gateway without plans and
 * the file fails on any difference (test/support/differential.ts); here
 * documents generated over the schema (nesting, aliases, fragments, variables,
 * @include/@skip, paging forwards and backwards, filters, missing rows,
 * arguments refused, scopes refused) are sent to such a gateway, and the
 * comparisons and the plans' executions counted.
 */

const gateway = useTestGateway();

const ids = { categories: [] as string[], pets: [] as string[], orders: [] as string[] };
/** Ship dates whose text has every part padded, and a year before 1000 (the DateTime scalar takes four digits). */
const shipDates = ['2026-01-01T00:00:00.000Z', '2026-11-30T23:59:59.123Z', '0999-12-31T23:59:59.999Z', '2026-02-08T09:05:07.050Z', '1970-01-01T00:00:00.010Z'];

beforeAll(async () => {
  for (let c = 0; c < 3; c++) {
    const category = await gateway.prisma.category.create({ data: { name: `Plan kind ${c}`, description: c === 0 ? null : `Kind ${c}` } });
    ids.categories.push(category.id.toString());
    for (let p = 0; p < 7; p++) {
      const pet = await gateway.prisma.pet.create({
        data: { name: `${String.fromCharCode(90 - p)}pet ${c}-${p}`, categoryId: category.id, status: p % 3 === 0 ? 'sold' : 'available' },
      });
      ids.pets.push(pet.id.toString());
      // Some pets have no stock entry, some no orders: relations that find nothing, empty lists.
      if (p % 2 === 0) await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: p, status: p === 0 ? 'sold' : 'available' } });
      for (let o = 0; o < p % 3; o++) {
        const order = await gateway.prisma.order.create({
          data: { petId: pet.id, quantity: o + 1, complete: o % 2 === 0, shipDate: o % 2 === 0 ? new Date(shipDates[(c * 7 + p) % shipDates.length]!) : null },
        });
        ids.orders.push(order.id.toString());
      }
    }
  }
});

// ---- generated documents ---------------------------------------------------------------------

interface Generated {
  text: string;
  variables: Record<string, unknown>;
}

type TypeName = 'Pet' | 'Category' | 'Order' | 'InventoryItem';

const scalars: Record<TypeName, string[]> = {
  Pet: ['id', 'name', 'categoryId', 'status', '__typename', 'nodeId'],
  Category: ['id', 'name', 'description', '__typename', 'nodeId'],
  Order: ['id', 'petId', 'quantity', 'shipDate', 'complete', '__typename', 'nodeId'],
  InventoryItem: ['petId', 'quantity', 'status', '__typename', 'nodeId'],
};
const relations: Record<TypeName, Array<[string, TypeName]>> = {
  Pet: [['category', 'Category'], ['inventory', 'InventoryItem']],
  Category: [],
  Order: [['pet', 'Pet']],
  InventoryItem: [['pet', 'Pet']],
};
const lists: Record<TypeName, Array<[string, TypeName]>> = {
  Pet: [['orders', 'Order']],
  Category: [['pets', 'Pet']],
  Order: [],
  InventoryItem: [],
};

/** A document being written: its variables' definitions and values, and its named fragments. */
class Writer {
  variables: Record<string, unknown> = {};
  definitions: string[] = [];
  fragments: string[] = [];
  private next = 0;
  variable(type: string, value: unknown): string {
    const name = `v${this.next++}`;
    this.definitions.push(`$${name}: ${type}`);
    this.variables[name] = value;
    return `$${name}`;
  }
  fragment(type: TypeName, body: string): string {
    const name = `F${this.next++}`;
    this.fragments.push(`fragment ${name} on ${type} { ${body} }`);
    return `...${name}`;
  }
}

type Part = (writer: Writer) => string;

// An alias names one field only (as clients write them): aliases shared by different fields are refused by validation.
const rarely = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary, weight: 1 });
const alias = rarely(fc.constantFrom('A', 'B'));
const named = (field: string, key: string | undefined) => (key ? `${field}${key}: ${field}` : field);

/** @include/@skip, written in the document or given as a variable, or none. */
const condition = rarely(
  fc.tuple(fc.constantFrom('include', 'skip'), fc.boolean(), fc.boolean()).map(
    ([directive, value, asVariable]): Part =>
      (writer) => ` @${directive}(if: ${asVariable ? writer.variable('Boolean!', value) : String(value)})`,
  ),
);

/** Paging arguments: forwards, backwards, after a cursor of a row that exists (or does not), sometimes too many. */
const paging = (cursors: () => string[]) =>
  fc
    .tuple(
      fc.constantFrom('first', 'last', 'none', 'after', 'before'),
      fc.integer({ min: 0, max: 6 }),
      fc.boolean(),
      fc.nat(),
      fc.constantFrom(false, false, false, false, true),
    )
    .map(([kind, size, asVariable, pick, tooMany]): Part => (writer) => {
      if (kind === 'none') return '';
      const count = tooMany ? 101 : size;
      const value = (type: string, given: unknown) => (asVariable ? writer.variable(type, given) : JSON.stringify(given));
      if (kind === 'first' || kind === 'last') return `${kind}: ${value('Int', count)}`;
      const list = cursors();
      const cursor = list.length ? list[pick % list.length]! : formatPrismaCursor({ id: 999_999n }, 'id');
      return kind === 'after' ? `first: ${value('Int', count)}, after: ${value('String', cursor)}` : `last: ${value('Int', count)}, before: ${value('String', cursor)}`;
    });

const cursorsOf = (list: string[]) => () => list.map((id) => formatPrismaCursor({ id: BigInt(id) }, 'id'));

function selection(type: TypeName, depth: number): fc.Arbitrary<Part> {
  const leaves = fc.subarray(scalars[type], { minLength: 1, maxLength: 3 }).chain((fields) =>
    fc.tuple(...fields.map((field) => fc.tuple(fc.constant(field), alias, condition))).map(
      (chosen): Part => (writer) => chosen.map(([field, key, when]) => `${named(field, key)}${when ? when(writer) : ''}`).join(' '),
    ),
  );
  const nested: Array<fc.Arbitrary<Part>> = [leaves];
  if (depth > 0) {
    for (const [field, target] of relations[type]) {
      nested.push(
        fc.tuple(alias, selection(target, depth - 1), condition).map(([key, body, when]): Part => (writer) => `${named(field, key)}${when ? when(writer) : ''} { ${body(writer)} }`),
      );
    }
    for (const [field, target] of lists[type]) {
      nested.push(fc.tuple(alias, connection(target, depth - 1), paging(cursorsOf(target === 'Pet' ? ids.pets : ids.orders))).map(
        ([key, body, args]): Part => (writer) => {
          const given = args(writer);
          return `${named(field, key)}${given ? `(${given})` : ''} { ${body(writer)} }`;
        },
      ));
    }
  }
  return fc.tuple(fc.subarray(nested, { minLength: 1, maxLength: Math.min(2, nested.length) }).chain((parts) => fc.tuple(...parts)), fc.constantFrom('plain', 'inline', 'named', 'plain')).map(
    ([parts, wrap]): Part => (writer) => {
      const body = parts.map((part) => part(writer)).join(' ');
      if (wrap === 'inline') return `... on ${type} { ${body} }`;
      if (wrap === 'named') return writer.fragment(type, body);
      return body;
    },
  );
}

function connection(type: TypeName, depth: number): fc.Arbitrary<Part> {
  const node = selection(type, depth);
  const parts: Array<fc.Arbitrary<Part>> = [
    fc.constant((): string => 'totalCount'),
    fc.constant((): string => 'totalCountPrecision'),
    fc.constant((): string => '__typename'),
    fc.subarray(['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor', '__typename'], { minLength: 1 }).map((fields): Part => () => `pageInfo { ${fields.join(' ')} }`),
    fc.tuple(fc.boolean(), node).map(([cursor, body]): Part => (writer) => `edges { ${cursor ? 'cursor ' : ''}node { ${body(writer)} } }`),
    fc.tuple(alias, node).map(([key, body]): Part => (writer) => `${named('nodes', key)} { ${body(writer)} }`),
  ];
  return fc.subarray(parts, { minLength: 1, maxLength: 3 }).chain((chosen) => fc.tuple(...chosen)).map((chosen): Part => (writer) => chosen.map((part) => part(writer)).join(' '));
}

/** A Node type's fields under node(id:): its scalars (those another Node type has with another type aliased) and its to-one relations. */
function nodeBody(type: TypeName): fc.Arbitrary<string> {
  const fields = [...scalars[type].map((name) => (name === 'quantity' || name === 'status' ? `${type.toLowerCase()}_${name}: ${name}` : name)), ...relations[type].map(([name]) => `${name} { __typename nodeId }`)];
  return fc.subarray(fields, { minLength: 1 }).map((picked) => picked.join(' '));
}

const existingOrNot = (list: () => string[]) => fc.tuple(fc.nat(), fc.boolean()).map(([pick, missing]) => () => (missing ? '99999999' : list()[pick % list().length]!));

const root = fc.oneof(
  fc.tuple(alias, connection('Pet', 2), paging(cursorsOf(ids.pets)), fc.option(fc.tuple(fc.constantFrom('AVAILABLE', 'SOLD', 'PENDING'), fc.boolean(), fc.boolean()), { nil: undefined }), fc.option(fc.constantFrom('ID', 'NAME'), { nil: undefined })).map(
    ([key, body, args, filter, order]): Part => (writer) => {
      const given = [args(writer)];
      if (filter) {
        const [status, byCategory, byName] = filter;
        const conditions = [`status: ${status}`];
        if (byCategory) conditions.push(`categoryId: ${writer.variable('ID', ids.categories[1])}`);
        if (byName) conditions.push('nameContains: "PET"');
        given.push(`filter: { ${conditions.join(', ')} }`);
      }
      if (order) given.push(`orderBy: { field: ${order}, direction: ${order === 'NAME' ? 'DESC' : 'ASC'} }`);
      const list = given.filter(Boolean).join(', ');
      return `${named('pets', key)}${list ? `(${list})` : ''} { ${body(writer)} }`;
    },
  ),
  fc.tuple(alias, connection('Category', 2), paging(cursorsOf(ids.categories))).map(([key, body, args]): Part => (writer) => {
    const given = args(writer);
    return `${named('categories', key)}${given ? `(${given})` : ''} { ${body(writer)} }`;
  }),
  fc.tuple(alias, connection('Order', 2), paging(cursorsOf(ids.orders)), fc.boolean()).map(([key, body, args, open]): Part => (writer) => {
    const given = [args(writer), open ? 'filter: { complete: false }' : ''].filter(Boolean).join(', ');
    return `${named('orders', key)}${given ? `(${given})` : ''} { ${body(writer)} }`;
  }),
  fc.tuple(alias, connection('InventoryItem', 2), fc.boolean()).map(([key, body, available]): Part => (writer) =>
    `${named('inventory', key)}${available ? '(filter: { status: AVAILABLE })' : ''} { ${body(writer)} }`,
  ),
  fc.tuple(alias, selection('Pet', 2), existingOrNot(() => ids.pets), fc.boolean()).map(([key, body, id, asVariable]): Part => (writer) =>
    `${named('pet', key)}(id: ${asVariable ? writer.variable('ID!', id()) : JSON.stringify(id())}) { ${body(writer)} }`,
  ),
  fc.tuple(alias, selection('Category', 2), existingOrNot(() => ids.categories)).map(([key, body, id]): Part => (writer) => `${named('category', key)}(id: "${id()}") { ${body(writer)} }`),
  fc.tuple(alias, selection('Order', 2), existingOrNot(() => ids.orders)).map(([key, body, id]): Part => (writer) => `${named('order', key)}(id: "${id()}") { ${body(writer)} }`),
  fc.tuple(alias, selection('InventoryItem', 1), existingOrNot(() => ids.pets)).map(([key, body, id]): Part => (writer) => `${named('inventoryItem', key)}(petId: "${id()}") { ${body(writer)} }`),
  fc.constant((): string => '__typename'),
  // node(id:) and nodes(ids:): a global id of each type (of a row or not), each type's selection in its own fragment
  // (fields a Node type shares by name with another but not by type, quantity and status, aliased by type).
  fc.tuple(alias, fc.array(fc.tuple(fc.constantFrom<TypeName>('Pet', 'Category', 'Order', 'InventoryItem'), fc.nat(), fc.boolean()), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean(), ...(['Pet', 'Category', 'Order', 'InventoryItem'] as const).map((type) => nodeBody(type)))
    .map(([key, wanted, many, onNode, ...bodies]): Part => (writer) => {
      const globalIds = wanted.map(([type, pick, missing]) => {
        const list = type === 'Pet' || type === 'InventoryItem' ? ids.pets : type === 'Category' ? ids.categories : ids.orders;
        return Buffer.from(`${type}:${missing ? '99999999' : list[pick % list.length]}`).toString('base64');
      });
      const fragments = (['Pet', 'Category', 'Order', 'InventoryItem'] as const).map((type, index) => `... on ${type} { ${bodies[index]} }`).join(' ');
      const common = onNode ? '... on Node { nodeId }' : '__typename';
      return many
        ? `${named('nodes', key)}(ids: ${writer.variable('[ID!]!', globalIds)}) { ${common} ${fragments} }`
        : `${named('node', key)}(id: ${writer.variable('ID!', globalIds[0])}) { ${common} ${fragments} }`;
    }),
);

const documents = fc.tuple(fc.uniqueArray(root, { minLength: 1, maxLength: 3, selector: () => Math.random() }), fc.boolean()).map(([fields, nameIt]): Generated => {
  const writer = new Writer();
  const body = fields.map((field) => field(writer)).join(' ');
  const header = `query${nameIt ? ' Generated' : ''}${writer.definitions.length ? `(${writer.definitions.join(', ')})` : ''}`;
  return { text: [`${header} { ${body} }`, ...writer.fragments].join('\n'), variables: writer.variables };
});

describe('query plans, checked against field-by-field execution', () => {

  it('answer every generated document as graphql-js does', { timeout: 240_000 }, async () => {
    const token = await testToken();
    const before = gateway.differential.checks;
    gateway.statements.length = 0;
    let answered = 0;
    let planned = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(documents, async ({ text, variables }) => {
        const executed = await gateway.executions('plan');
        // Twice: a plan is made on a document's first execution and kept for the next.
        for (let round = 0; round < 2; round++) {
          const answer = await postGraphQL<{ errors?: unknown[] }>(gateway.baseUrl, { query: text, variables }, { authorization: `Bearer ${token}` });
          expect([200, 400], answer.text).toContain(answer.status);
          if (answer.body.errors) refused++;
          answered++;
        }
        if ((await gateway.executions('plan')) - executed === 2) planned++;
        expect(gateway.differential.mismatches, `${text}\n${JSON.stringify(variables)}`).toEqual([]);
      }),
      { numRuns: 150, seed: 20261126 },
    );
    expect(answered).toBe(300);
    // Every answer was compared with graphql-js', the refusals too.
    expect(gateway.differential.checks - before).toBe(300);
    expect(refused).toBeGreaterThan(20);
    // Most generated documents are answered by their plan both times (those with a page over 100 are refused before any read).
    expect(planned).toBeGreaterThan(100);
    // Most planned lists were read by a statement of the gateway's own (src/database/find-many.ts), checked like the rest.
    expect(gateway.statements.filter((statement) => statement.startsWith('/* petstore read */')).length).toBeGreaterThan(50);
  });

  it('read a page and its totalCount in one statement: one connection a request, not two at once', async () => {
    const text = 'query Counted($after: String) { orders(first: 2, after: $after) { totalCount nodes { id } pageInfo { endCursor } } }';
    const total = await gateway.prisma.order.count();
    // Yoga answers the document first; its plan the next times.
    await gateway.graphql(text);
    gateway.statements.length = 0;
    const first = await gateway.graphql<{ orders: { totalCount: number; nodes: unknown[]; pageInfo: { endCursor: string } } }>(text);
    expect(first.data?.orders).toMatchObject({ totalCount: total, nodes: [expect.anything(), expect.anything()] });
    // Unfiltered, it is the table's kept count (src/database/row-counts.ts).
    expect(gateway.statements).toEqual([expect.stringMatching(/^\/\* petstore read \*\/ SELECT .*\(SELECT LEAST\(sum\(orders\), \d+\)::int8 FROM row_counts\)/)]);
    // A page past the end has no row to carry the count: it is counted on its own, and still told.
    const last = Buffer.from(`GPC:I:${(await gateway.prisma.order.findFirstOrThrow({ orderBy: { id: 'desc' } })).id}`).toString('base64');
    gateway.statements.length = 0;
    const past = await gateway.graphql<{ orders: { totalCount: number; nodes: unknown[] } }>(text, { after: last });
    expect(past.data?.orders).toMatchObject({ totalCount: total, nodes: [] });
    expect(gateway.statements).toHaveLength(2);
    expect(gateway.differential.mismatches).toEqual([]);
  });

  it('answer the same for a caller without the scope a field needs (the plan leaves it to graphql-js)', async () => {
    const readOnly = await testToken([allScopeNames.writeCatalog]);
    const text = '{ pets(first: 2) { nodes { id orders { totalCount } } } orders(first: 1) { totalCount } }';
    const executed = { plan: await gateway.executions('plan'), graphqlJs: await gateway.executions('graphql-js') };
    for (let round = 0; round < 2; round++) {
      const answer = await postGraphQL<{ errors?: Array<{ extensions?: { code?: string } }> }>(gateway.baseUrl, { query: text }, { authorization: `Bearer ${readOnly}` });
      expect(answer.status).toBe(200);
      expect(answer.body.errors?.map((error) => error.extensions?.code)).toContain('FORBIDDEN');
    }
    expect(await gateway.executions('plan')).toBe(executed.plan);
    expect(await gateway.executions('graphql-js')).toBe(executed.graphqlJs + 2);
    expect(gateway.differential.mismatches).toEqual([]);
  });
});
