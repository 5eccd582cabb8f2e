import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';

/**
 * `_entities` and `_service` as a router meets them, sent over HTTP to the
 * gateway with FEDERATION on: any mix of representations, one SQL statement
 * per entity type whatever their number (with query plans and with graphql-js
 * alone), `null` for an id with no row, the fields' scope rules and
 * the error shape of every other field. Without the setting the gateway has
 * neither field.
 */

const planned = useTestGateway({ federation: true });
// With another sunset date, so that the subgraph built for a configured deprecation is driven too.
const graphqlJs = useTestGateway({ federation: true, queryPlans: false, legacySunsetDate: '2027-12-31' });
const standalone = useTestGateway();

interface Arranged {
  categoryIds: string[];
  petIds: string[];
  orderIds: string[];
  /** Pets with an inventory entry (every other one). */
  stockedPetIds: string[];
}

/** The same rows in each gateway's own database. */
async function arrange(gateway: typeof planned): Promise<Arranged> {
  const categories = await Promise.all(
    ['Dogs', 'Cats'].map((name) => gateway.prisma.category.create({ data: { name, description: `All the ${name.toLowerCase()}` } })),
  );
  const petIds: string[] = [];
  const stockedPetIds: string[] = [];
  const orderIds: string[] = [];
  for (let i = 0; i < 12; i++) {
    const stocked = i % 2 === 0;
    const pet = await gateway.prisma.pet.create({
      data: {
        name: `Pet ${i}`,
        categoryId: categories[i % 2]!.id,
        ...(stocked ? { inventory: { create: { quantity: 10 + i, status: 'available' } } } : {}),
        orders: { create: [{ quantity: 1 + i }] },
      },
      include: { orders: true },
    });
    petIds.push(String(pet.id));
    if (stocked) stockedPetIds.push(String(pet.id));
    orderIds.push(String(pet.orders[0]!.id));
  }
  return { categoryIds: categories.map((category) => String(category.id)), petIds, orderIds, stockedPetIds };
}

const entities = /* GraphQL */ `
  query Entities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Pet { id name status category { id name } inventory { quantity } }
      ... on Category { id name description pets(first: 3) { totalCount nodes { name } } }
      ... on Order { id quantity pet { name } }
      ... on InventoryItem { petId stock: quantity stockStatus: status pet { name } }
    }
  }
`;

type Entity = Record<string, unknown> & { __typename: string };

const engines = [
  ['with query plans', planned],
  ['graphql-js', graphqlJs],
] as const;

const arranged = new Map<typeof planned, Arranged>();
beforeAll(async () => {
  for (const [, gateway] of engines) arranged.set(gateway, await arrange(gateway));
});

describe.each(engines)('_entities, %s', (_engine, gateway) => {
  const rows = () => arranged.get(gateway)!;

  it('answers any mix of representations in their order, each as its own query would, with one statement per type', async () => {
    const { petIds, categoryIds, orderIds, stockedPetIds } = rows();
    const representations = [
      ...petIds.map((id) => ({ __typename: 'Pet', id })),
      { __typename: 'Category', id: categoryIds[1] },
      { __typename: 'Order', id: orderIds[3] },
      { __typename: 'InventoryItem', petId: stockedPetIds[2] },
      { __typename: 'Category', id: categoryIds[0] },
    ];
    // Twice: a document's second run is answered as its first.
    for (let run = 0; run < 2; run++) {
      gateway.statements.length = 0;
      const response = await gateway.graphql<{ _entities: Entity[] }>(entities, { representations });
      expect(response.errors).toBeUndefined();
      const answered = response.data!._entities;
      expect(answered.map((entity) => entity.__typename)).toEqual(representations.map((r) => r.__typename));
      // One statement for the pets (their category and stock joined in), one for the categories (their
      // pets joined in), one for the order, one for the stock entry.
      expect(gateway.statements).toHaveLength(4);

      // The same data the root lookups give.
      const pet = await gateway.graphql<{ pet: unknown }>(
        'query($id: ID!) { pet(id: $id) { id name status category { id name } inventory { quantity } } }',
        { id: petIds[4] },
      );
      expect({ __typename: 'Pet', ...(pet.data!.pet as object) }).toEqual(answered[4]);
      const category = await gateway.graphql<{ category: unknown }>(
        'query($id: ID!) { category(id: $id) { id name description pets(first: 3) { totalCount nodes { name } } } }',
        { id: categoryIds[1] },
      );
      expect({ __typename: 'Category', ...(category.data!.category as object) }).toEqual(answered[12]);
      expect(answered[13]).toEqual({ __typename: 'Order', id: orderIds[3], quantity: 4, pet: { name: 'Pet 3' } });
      expect(answered[14]).toEqual({
        __typename: 'InventoryItem',
        petId: stockedPetIds[2],
        stock: 14,
        stockStatus: 'AVAILABLE',
        pet: { name: 'Pet 4' },
      });
      expect(answered[1]).toMatchObject({ id: petIds[1], inventory: null, category: { id: categoryIds[1] } });
    }
  });

  it('reads 5 pets and 12 pets with the same one statement', async () => {
    const count = async (ids: string[]) => {
      gateway.statements.length = 0;
      const response = await gateway.graphql<{ _entities: Entity[] }>(entities, {
        representations: ids.map((id) => ({ __typename: 'Pet', id })),
      });
      expect(response.errors).toBeUndefined();
      expect(response.data!._entities.map((pet) => pet.id)).toEqual(ids);
      return gateway.statements.length;
    };
    expect(await count(rows().petIds.slice(0, 5))).toBe(1);
    expect(await count(rows().petIds)).toBe(1);
  });

  it('answers null for an id with no row, and for a pet without stock as an InventoryItem', async () => {
    const { petIds } = rows();
    const missingPet = String(BigInt(petIds.at(-1)!) + 1000n);
    const unstockedPet = petIds[1]!;
    const response = await gateway.graphql<{ _entities: Array<Entity | null> }>(entities, {
      representations: [
        { __typename: 'Pet', id: missingPet },
        { __typename: 'Pet', id: petIds[0] },
        { __typename: 'InventoryItem', petId: unstockedPet },
        { __typename: 'Order', id: '9223372036854775807' },
      ],
    });
    expect(response.errors).toBeUndefined();
    expect(response.data!._entities.map((entity) => entity?.__typename ?? null)).toEqual([null, 'Pet', null, null]);
  });

  it('needs orders:read for an Order, as order(id:) does: UNAUTHENTICATED without a token, FORBIDDEN without the scope', async () => {
    const { orderIds, petIds } = rows();
    const representations = [
      { __typename: 'Pet', id: petIds[0] },
      { __typename: 'Order', id: orderIds[0] },
    ];
    const anonymous = await gateway.graphql<{ _entities: Array<Entity | null> }>(entities, { representations }, { token: null });
    expect(anonymous.data!._entities[0]).toMatchObject({ __typename: 'Pet', id: petIds[0] });
    expect(anonymous.data!._entities[1]).toBeNull();
    expect(anonymous.errors).toEqual([
      expect.objectContaining({ path: ['_entities', 1], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', status: 401 }) }),
    ]);
    const order = await gateway.graphql('query($id: ID!) { order(id: $id) { id } }', { id: orderIds[0] }, { token: null });
    expect(anonymous.errors![0]!.message).toBe(order.errors![0]!.message);

    const writer = await testToken(['orders:write']);
    const forbidden = await gateway.graphql(entities, { representations }, { token: writer });
    expect(forbidden.errors).toEqual([
      expect.objectContaining({ path: ['_entities', 1], extensions: expect.objectContaining({ code: 'FORBIDDEN', status: 403 }) }),
    ]);

    const reader = await testToken(['orders:read']);
    const allowed = await gateway.graphql<{ _entities: Entity[] }>(entities, { representations }, { token: reader });
    expect(allowed.errors).toBeUndefined();
    expect(allowed.data!._entities[1]).toMatchObject({ __typename: 'Order', id: orderIds[0] });
  });

  it("keeps a pet's orders behind orders:read when the pet comes as an entity", async () => {
    const { petIds } = rows();
    const query = /* GraphQL */ `
      query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Pet { name orders(first: 5) { totalCount } } } }
    `;
    const representations = [{ __typename: 'Pet', id: petIds[0] }];
    const refused = await gateway.graphql(query, { representations }, { token: null });
    expect(refused.errors).toEqual([
      expect.objectContaining({ path: ['_entities', 0, 'orders'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) }),
    ]);
    const allowed = await gateway.graphql<{ _entities: Array<{ orders: { totalCount: number } }> }>(query, { representations });
    expect(allowed.errors).toBeUndefined();
    expect(allowed.data!._entities[0]!.orders.totalCount).toBe(1);
  });

  it('refuses a representation it cannot read with VALIDATION_FAILED at its own index, the others answered', async () => {
    const { petIds } = rows();
    const response = await gateway.graphql<{ _entities: Array<Entity | null> }>(entities, {
      representations: [
        { __typename: 'Pet', id: 'not-a-number' },
        { __typename: 'Review', id: '1' },
        { __typename: 'Pet', id: petIds[2] },
        { __typename: 'Pet' },
        { __typename: 'Pet', id: '9223372036854775808' },
        { id: petIds[2] },
      ],
    });
    expect(response.data!._entities.map((entity) => entity?.id ?? null)).toEqual([null, null, petIds[2], null, null, null]);
    const errors = [...(response.errors ?? [])].sort((a, b) => Number(a.path?.[1]) - Number(b.path?.[1]));
    expect(errors.map((error) => [error.path, error.extensions?.code, error.extensions?.status])).toEqual(
      [0, 1, 3, 4, 5].map((index) => [['_entities', index], 'VALIDATION_FAILED', 400]),
    );
    expect(errors.find((error) => String(error.path?.[1]) === '0')?.message).toMatch(/^id must be a whole number from 1 to 9223372036854775807/);
    expect(errors.find((error) => String(error.path?.[1]) === '1')?.message).toContain('"Review", which is not an entity of this subgraph');
  });
});

describe('_service', () => {
  it('gives the subgraph SDL: the @link import, each entity with its key, the other federation directives', async () => {
    const response = await planned.graphql<{ _service: { sdl: string } }>('{ _service { sdl } }', undefined, { token: null });
    expect(response.errors).toBeUndefined();
    const sdl = response.data!._service.sdl;
    expect(sdl).toMatch(
      /extend schema\s+@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \["@inaccessible", "@key", "@shareable", "@tag"\]\)/,
    );
    for (const [type, key] of [
      ['Pet', 'id'],
      ['Category', 'id'],
      ['Order', 'id'],
      ['InventoryItem', 'petId'],
    ]) {
      expect(sdl).toMatch(new RegExp(`type ${type} implements Node\\s+@key\\(fields: "${key}"\\)\\s*\\{`));
    }
    expect(sdl).toMatch(/type PageInfo\s+@shareable/);
    expect(sdl).toMatch(/getPetById\([^)]*\): Pet @deprecated\(reason: "[^"]*"\) @inaccessible/);
    expect(sdl).toMatch(/inventorySummary: \[InventoryStatusTotal!\]! @tag\(name: "beta"\)/);
    // The router's own fields are not part of what it composes.
    expect(sdl).not.toContain('_entities');
  });

  it('prints the schema as served: the deprecation names the configured sunset date', async () => {
    const sdlOf = async (gateway: typeof planned) =>
      (await gateway.graphql<{ _service: { sdl: string } }>('{ _service { sdl } }')).data!._service.sdl;
    expect(await sdlOf(planned)).toContain('getPetById will be removed on 2027-06-30 (sunset date).');
    expect(await sdlOf(graphqlJs)).toContain('getPetById will be removed on 2027-12-31 (sunset date).');
  });
});

describe('the standalone gateway (FEDERATION off, the default)', () => {
  it('has neither _service nor _entities, nor any federation directive in its schema', async () => {
    for (const query of ['{ _service { sdl } }', '{ _entities(representations: []) { __typename } }']) {
      const response = await standalone.graphql(query);
      expect(response.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
      expect(response.errors?.[0]?.message).toMatch(/^Cannot query field "_(service|entities)" on type "Query"\./);
    }
    const types = await standalone.graphql<{ __schema: { types: Array<{ name: string }>; directives: Array<{ name: string }> } }>(
      '{ __schema { types { name } directives { name } } }',
    );
    const names = types.data!.__schema.types.map((type) => type.name);
    expect(names).toContain('Pet');
    expect(names.filter((name) => name.startsWith('_') && !name.startsWith('__'))).toEqual([]);
    expect(types.data!.__schema.directives.map((directive) => directive.name)).not.toContain('key');
  });
});

describe('_entities by its query plan', () => {
  it("answers a router's fetch by its plan from the first request, and leaves to graphql-js what only it can answer", async () => {
    const { petIds, categoryIds, orderIds, stockedPetIds } = arranged.get(planned)!;
    const representations = [
      ...petIds.slice(0, 3).map((id) => ({ __typename: 'Pet', id })),
      { __typename: 'Category', id: categoryIds[0] },
      { __typename: 'Order', id: orderIds[0] },
      { __typename: 'InventoryItem', petId: stockedPetIds[0] },
    ];
    const counts = async () => ({ plan: await planned.executions('plan'), graphqlJs: await planned.executions('graphql-js') });
    const before = await counts();
    for (let run = 0; run < 2; run++) {
      const response = await planned.graphql<{ _entities: Entity[] }>(entities, { representations });
      expect(response.errors).toBeUndefined();
      expect(response.data!._entities.map((entity) => entity.__typename)).toEqual(['Pet', 'Pet', 'Pet', 'Category', 'Order', 'InventoryItem']);
    }
    expect(await counts()).toEqual({ plan: before.plan + 2, graphqlJs: before.graphqlJs });

    // A representation that names nothing, and an order without orders:read: each error at its index, by graphql-js.
    const bad = await planned.graphql<{ _entities: Array<Entity | null> }>(entities, { representations: [...representations, { __typename: 'Review', id: '1' }] });
    expect(bad.errors).toEqual([expect.objectContaining({ path: ['_entities', 6], extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }) })]);
    const anonymous = await planned.graphql(entities, { representations }, { token: null });
    expect(anonymous.errors).toEqual([expect.objectContaining({ path: ['_entities', 4], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
    expect(await counts()).toEqual({ plan: before.plan + 2, graphqlJs: before.graphqlJs + 2 });
  });
});
