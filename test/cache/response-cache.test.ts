import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphQLResponse, useTestGateway } from '../support/gateway.js';
import {
  baseUrlOf,
  channelPrefix,
  cleanUp,
  migratedDatabase,
  processToken,
  REDIS_URL,
  startProcess,
} from '../support/operations.js';
import { type GatewayProcess, postGraphQL, stopAll } from '../support/processes.js';

/**
 * The response cache (RESPONSE_CACHE_TTL_MS): anonymous reads are answered
 * from memory, and no answer from before a write is given once that write has
 * answered: not by this instance, nor (through Redis) by another.
 */

const CATALOGUE = /* GraphQL */ `
  query Catalogue {
    categories(first: 20) {
      totalCount
      edges {
        node {
          id
          name
          description
          pets(first: 10) {
            totalCount
            edges { node { id name status inventory { quantity status } } }
          }
        }
      }
    }
    inventorySummary { status entries quantity }
  }
`;

const PET_NAME = /* GraphQL */ `
  query PetName($id: ID!) {
    pet(id: $id) { name }
  }
`;

const gateway = useTestGateway({
  responseCache: { ttlMs: 60_000, maxEntries: 100, generationKey: 'unused without Redis' },
});

const anonymous = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gateway.graphql<T>(query, variables, { token: null });
/** With a token the cache is bypassed: what the database holds now. */
const authenticated = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gateway.graphql<T>(query, variables);

/** The catalogue read, which must succeed: a cached error would prove nothing. */
async function catalogue(read: typeof anonymous) {
  const answer = await read(CATALOGUE);
  expect(answer.errors).toBeUndefined();
  return answer;
}

async function write<T = Record<string, unknown>>(mutation: string, variables: Record<string, unknown>) {
  const result = await authenticated<T>(mutation, variables);
  expect(result.errors).toBeUndefined();
  return result.data as T;
}

/** The SQL statements the gateway ran while `work` ran. */
async function statementsDuring(work: () => Promise<unknown>) {
  gateway.statements.length = 0;
  await work();
  return gateway.statements.length;
}

async function lookups(result: 'hit' | 'miss') {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`petstore_response_cache_lookups_total{result="${result}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

let categoryId = '';
let emptyCategoryId = '';
let petId = '';
beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Cached dogs' } });
  const empty = await gateway.prisma.category.create({ data: { name: 'Cached, empty' } });
  const pet = await gateway.prisma.pet.create({
    data: { name: 'Rex', categoryId: category.id, inventory: { create: { quantity: 5, status: 'available' } } },
  });
  categoryId = String(category.id);
  emptyCategoryId = String(empty.id);
  petId = String(pet.id);
});

describe('anonymous reads', () => {
  it('are answered from memory the second time: the same answer, no SQL, counted as a hit', async () => {
    const hitsBefore = await lookups('hit');
    let first: GraphQLResponse | undefined;
    expect(await statementsDuring(async () => (first = await catalogue(anonymous)))).toBeGreaterThan(0);
    let second: GraphQLResponse | undefined;
    expect(await statementsDuring(async () => (second = await catalogue(anonymous)))).toBe(0);
    expect(second).toEqual(first);
    expect(await lookups('hit')).toBe(hitsBefore + 1);
  });

  it('keep a change made outside the gateway until the answer expires (writes through it are seen at once)', async () => {
    const before = await anonymous(PET_NAME, { id: petId });
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name: 'Renamed in SQL' } });
    expect(await anonymous(PET_NAME, { id: petId })).toEqual(before);
    expect((await authenticated(PET_NAME, { id: petId })).data).toEqual({ pet: { name: 'Renamed in SQL' } });
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name: 'Rex' } });
  });

  it('are told apart by their variables', async () => {
    const other = await gateway.prisma.pet.create({ data: { name: 'Tom', categoryId: BigInt(categoryId) } });
    expect((await anonymous(PET_NAME, { id: petId })).data).toEqual({ pet: { name: 'Rex' } });
    expect((await anonymous(PET_NAME, { id: String(other.id) })).data).toEqual({ pet: { name: 'Tom' } });
    await write('mutation ($id: ID!) { deletePet(id: $id) { id } }', { id: String(other.id) });
  });
});

describe('after each kind of write through the gateway, the next anonymous read is current', () => {
  const writes: Array<[string, () => Promise<unknown>]> = [
    ['createPet', () => write('mutation ($input: NewPet!) { createPet(input: $input) { id } }', { input: { name: 'Nala', categoryId } })],
    ['updatePet', () => write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Rex II" }) { id } }', { id: petId })],
    [
      'placeOrder',
      async () => {
        const { placeOrder } = await write<{ placeOrder: { id: string } }>(
          'mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 2 }) { id } }',
          { petId },
        );
        orderId = placeOrder.id;
      },
    ],
    ['cancelOrder', () => write('mutation ($id: ID!) { cancelOrder(id: $id) { id } }', { id: orderId })],
    ['updateInventory', () => write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 0 }) { quantity } }', { petId })],
    ['createCategory', () => write('mutation { createCategory(input: { name: "Cached cats" }) { id } }', {})],
    ['updateCategory', () => write('mutation ($id: ID!) { updateCategory(id: $id, input: { description: "Good boys" }) { id } }', { id: categoryId })],
  ];
  let orderId = '';

  it.each(writes)('%s', async (_name, change) => {
    const before = await catalogue(anonymous);
    expect(await statementsDuring(() => catalogue(anonymous))).toBe(0); // cached
    await change();
    const after = await catalogue(anonymous);
    expect(after).not.toEqual(before);
    expect(after).toEqual(await catalogue(authenticated));
  });

  it('also an answer that names no pet: an empty category gains one', async () => {
    const query = 'query ($id: ID!) { category(id: $id) { pets { totalCount edges { node { name } } } } }';
    expect((await anonymous(query, { id: emptyCategoryId })).data).toEqual({
      category: { pets: { totalCount: 0, edges: [] } },
    });
    expect(await statementsDuring(() => anonymous(query, { id: emptyCategoryId }))).toBe(0);
    await write('mutation ($input: NewPet!) { createPet(input: $input) { id } }', {
      input: { name: 'First', categoryId: emptyCategoryId },
    });
    expect((await anonymous(query, { id: emptyCategoryId })).data).toEqual({
      category: { pets: { totalCount: 1, edges: [{ node: { name: 'First' } }] } },
    });
  });

  it('and a refused write drops nothing it should keep, nor keeps anything it should drop', async () => {
    // Refused for stock (nothing written): the next read may be a miss, but is still right.
    const refused = await authenticated('mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 99 }) { id } }', {
      petId,
    });
    expect(refused.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_STOCK');
    expect(await catalogue(anonymous)).toEqual(await catalogue(authenticated));
  });
});

describe('what is never cached', () => {
  it('requests with a token: each runs its SQL and sees the database as it is', async () => {
    await anonymous(PET_NAME, { id: petId });
    expect(await statementsDuring(() => authenticated(PET_NAME, { id: petId }))).toBeGreaterThan(0);
    expect(await statementsDuring(() => authenticated(PET_NAME, { id: petId }))).toBeGreaterThan(0);
  });

  it('answers with errors', async () => {
    const query = 'query ($id: ID!) { pet(id: $id) { name } orders(first: 1) { totalCount } }';
    const hitsBefore = await lookups('hit');
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await anonymous(query, { id: petId });
      expect(answer.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(await lookups('hit')).toBe(hitsBefore);
  });

  it('subscriptions, introspection and documents that fail validation are unaffected', async () => {
    const introspection = await anonymous('{ __schema { queryType { name } } }');
    expect(introspection.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    const invalid = await anonymous('{ pets { nope } }');
    expect(invalid.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});

describe('expiry', () => {
  const shortLived = useTestGateway({
    responseCache: { ttlMs: 300, maxEntries: 100, generationKey: 'unused without Redis' },
  });

  it('an answer is dropped after RESPONSE_CACHE_TTL_MS, so changes made outside the gateway show then', async () => {
    const category = await shortLived.prisma.category.create({ data: { name: 'Short-lived' } });
    const query = 'query ($id: ID!) { category(id: $id) { name } }';
    const variables = { id: String(category.id) };
    expect((await shortLived.graphql(query, variables, { token: null })).data).toEqual({ category: { name: 'Short-lived' } });
    await shortLived.prisma.category.update({ where: { id: category.id }, data: { name: 'Renamed' } });
    expect((await shortLived.graphql(query, variables, { token: null })).data).toEqual({ category: { name: 'Short-lived' } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await shortLived.graphql(query, variables, { token: null })).data).toEqual({ category: { name: 'Renamed' } });
  });
});

describe('several instances (real processes on one database)', () => {
  let database: Awaited<ReturnType<typeof migratedDatabase>>;
  let writer: GatewayProcess;
  let reader: GatewayProcess;
  let isolated: GatewayProcess;
  let id = '';

  beforeAll(async () => {
    database = await migratedDatabase();
    const category = await database.prisma.category.create({ data: { name: 'Shared' } });
    id = String((await database.prisma.pet.create({ data: { name: 'Before', categoryId: category.id } })).id);
    const cached = { RESPONSE_CACHE_TTL_MS: '60000', EVENTS_CHANNEL_PREFIX: channelPrefix() };
    [writer, reader, isolated] = await Promise.all([
      startProcess(database.url, { ...cached, REDIS_URL }),
      startProcess(database.url, { ...cached, REDIS_URL }),
      // The same cache without Redis: it cannot hear of writes made elsewhere.
      startProcess(database.url, cached),
    ]);
  }, 120_000);

  afterAll(async () => {
    stopAll();
    await cleanUp();
  });

  it(`with REDIS_URL, a write through one instance is seen by the others' next read; without, only after the TTL`, async () => {
    const name = async (instance: GatewayProcess) =>
      (await postGraphQL<{ pet: { name: string } }>(instance.url, PET_NAME, { id })).body.data?.pet.name;
    expect(await name(reader)).toBe('Before');
    expect(await name(isolated)).toBe('Before');
    const rename = await postGraphQL(
      writer.url,
      'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }',
      { id, name: `After ${randomUUID().slice(0, 8)}` },
      { authorization: `Bearer ${await processToken()}` },
    );
    expect(rename.body.errors).toBeUndefined();
    const renamed = (rename.body.data as { updatePet: { name: string } }).updatePet.name;
    expect(await name(reader)).toBe(renamed);
    expect(await name(writer)).toBe(renamed);
    expect(await name(isolated)).toBe('Before');
    const metrics = await (await fetch(`${baseUrlOf(reader)}/metrics`)).text();
    expect(metrics).toMatch(/petstore_response_cache_lookups_total\{result="miss"\} [1-9]/);
  });
});
