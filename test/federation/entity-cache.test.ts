import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';

/**
 * `_entities` answers under the response cache (RESPONSE_CACHE_TTL_MS) of a
 * subgraph: a router sends the same entity fetch again and again, and gets it
 * from memory (no statement) until a write outdates one of the entities it
 * holds, or could add one it answered null for; a write to another entity
 * leaves it kept. The tags are those of any other answer: each entity by its
 * type and key, as `__typename` (which routers always select) names it.
 */

const gateway = useTestGateway({
  federation: true,
  responseCache: { ttlMs: 60_000, maxEntries: 100, maxBytes: 10_000_000, keyPrefix: 'unused without Redis' },
});

const ENTITIES = /* GraphQL */ `
  query Entities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Pet { id name category { name } }
      ... on InventoryItem { petId quantity }
    }
  }
`;

let petIds: string[];

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  petIds = [];
  for (const name of ['Rex', 'Fido', 'Max']) {
    const pet = await gateway.prisma.pet.create({
      data: { name, categoryId: category.id, inventory: { create: { quantity: 5, status: 'available' } } },
    });
    petIds.push(String(pet.id));
  }
});

/** The router's fetch, and how many statements the petstore ran for it (0: answered from memory). */
async function fetchEntities(representations: Array<Record<string, unknown>>) {
  gateway.statements.length = 0;
  const response = await gateway.graphql<{ _entities: Array<Record<string, unknown> | null> }>(ENTITIES, { representations });
  expect(response.errors).toBeUndefined();
  return { entities: response.data!._entities, statements: gateway.statements.length };
}

async function write(query: string, variables: Record<string, unknown>) {
  const response = await gateway.graphql(query, variables, { token: await testToken(['catalog:write', 'inventory:write']) });
  expect(response.errors).toBeUndefined();
}

const rename = (id: string, name: string) =>
  write('mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id } }', { id, name });

describe('_entities under the response cache', () => {
  it('is kept, and outdated by a write to an entity it holds, not by one to another', async () => {
    const representations = [
      { __typename: 'Pet', id: petIds[0]! },
      { __typename: 'InventoryItem', petId: petIds[1]! },
    ];
    const first = await fetchEntities(representations);
    expect(first.statements).toBe(2);
    expect(first.entities[0]).toMatchObject({ name: 'Rex' });
    expect((await fetchEntities(representations)).statements).toBe(0);

    // Another pet renamed: not in this answer.
    await rename(petIds[2]!, 'Maximus');
    expect((await fetchEntities(representations)).statements).toBe(0);

    await rename(petIds[0]!, 'Rexford');
    const renamed = await fetchEntities(representations);
    expect(renamed.statements).toBe(2);
    expect(renamed.entities[0]).toMatchObject({ __typename: 'Pet', name: 'Rexford' });

    await write('mutation($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 9 }) { quantity } }', { petId: petIds[1] });
    const restocked = await fetchEntities(representations);
    expect(restocked.statements).toBe(2);
    expect(restocked.entities[1]).toEqual({ __typename: 'InventoryItem', petId: petIds[1], quantity: 9 });
  });

  it('answered null for a pet with no stock entry: outdated once the entry exists', async () => {
    const pet = await gateway.prisma.pet.create({ data: { name: 'Nemo', categoryId: (await gateway.prisma.category.findFirstOrThrow()).id } });
    const representations = [{ __typename: 'InventoryItem', petId: String(pet.id) }];
    expect((await fetchEntities(representations)).entities).toEqual([null]);
    expect((await fetchEntities(representations)).statements).toBe(0);
    await write('mutation($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 2 }) { quantity } }', { petId: String(pet.id) });
    expect((await fetchEntities(representations)).entities).toEqual([{ __typename: 'InventoryItem', petId: String(pet.id), quantity: 2 }]);
  });
});
