import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { allScopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { channelPrefix, cleanUp, crowdedCategory, migratedDatabase, REDIS_URL, startProcess } from '../support/operations.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { postGraphQL, type GraphQLAnswer } from '../support/http.js';
import { waitFor } from '../support/subscriptions.js';

/**
 * The response cache (RESPONSE_CACHE_TTL_MS): query answers are kept per
 * scope set and given from memory; a write outdates the answers that hold what
 * it changed or list or count its types, and no others; no answer from before
 * a write is given once that write has answered: not by this instance, nor
 * (through Redis) by another.
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

const settings = { ttlMs: 60_000, maxEntries: 100, maxBytes: 10_000_000, keyPrefix: 'unused without Redis' };
const gateway = useTestGateway({ responseCache: settings });

const anonymous = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gateway.graphql<T>(query, variables, { token: null });
/** Every scope: answers shared by every caller with every scope. */
const authenticated = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gateway.graphql<T>(query, variables);
/**
 * What the database holds now: a caller whose scope set no other request has (every scope and
 * one of its own) shares no answer, so its request is executed.
 */
const fresh = async <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gateway.graphql<T>(query, variables, { token: await testToken([...allScopes, `fresh:${randomUUID()}`]) });

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

async function metric(name: string, baseUrl = gateway.baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? 0);
}
const lookups = (result: 'hit' | 'peer' | 'miss' | 'outdated' | 'shared') => metric(`petstore_response_cache_lookups_total{result="${result}"}`);

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
    let first: GraphQLAnswer | undefined;
    expect(await statementsDuring(async () => (first = await catalogue(anonymous)))).toBeGreaterThan(0);
    let second: GraphQLAnswer | undefined;
    expect(await statementsDuring(async () => (second = await catalogue(anonymous)))).toBe(0);
    expect(second).toEqual(first);
    expect(await lookups('hit')).toBe(hitsBefore + 1);
  });

  it('keep a change made outside the gateway until the answer expires (writes through it are seen at once)', async () => {
    const before = await anonymous(PET_NAME, { id: petId });
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name: 'Renamed in SQL' } });
    expect(await anonymous(PET_NAME, { id: petId })).toEqual(before);
    expect((await fresh(PET_NAME, { id: petId })).data).toEqual({ pet: { name: 'Renamed in SQL' } });
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name: 'Rex' } });
  });

  it('are told apart by their variables', async () => {
    const other = await gateway.prisma.pet.create({ data: { name: 'Tom', categoryId: BigInt(categoryId) } });
    expect((await anonymous(PET_NAME, { id: petId })).data).toEqual({ pet: { name: 'Rex' } });
    expect((await anonymous(PET_NAME, { id: String(other.id) })).data).toEqual({ pet: { name: 'Tom' } });
    await write('mutation ($id: ID!) { deletePet(id: $id) { id } }', { id: String(other.id) });
  });
});

describe('after each kind of write through the gateway, the next read is current, anonymous or not', () => {
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
    await catalogue(authenticated);
    expect(await statementsDuring(() => catalogue(anonymous))).toBe(0); // cached
    expect(await statementsDuring(() => catalogue(authenticated))).toBe(0);
    await change();
    const after = await catalogue(anonymous);
    expect(after).not.toEqual(before);
    expect(after).toEqual(await catalogue(fresh));
    expect(await catalogue(authenticated)).toEqual(after);
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
    expect(await catalogue(anonymous)).toEqual(await catalogue(fresh));
  });
});

describe('who shares an answer', () => {
  const ORDERS = 'query ($petId: ID!) { orders(filter: { petId: $petId }) { totalCount nodes { id quantity } } }';

  it('callers with the same scopes, whoever they are; not callers with other scopes, nor anonymous ones', async () => {
    const reader = (subject: string, scopes = ['orders:read']) => async (query: string, variables?: Record<string, unknown>) =>
      gateway.graphql<{ pet: { name: string } }>(query, variables, { token: await testToken(scopes, subject) });
    const name = `Shared ${randomUUID().slice(0, 6)}`;
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name } });
    expect((await reader('alice')(PET_NAME, { id: petId })).data).toEqual({ pet: { name } });
    // Changed behind the gateway's back: whoever gets the old name got the kept answer.
    await gateway.prisma.pet.update({ where: { id: BigInt(petId) }, data: { name: `${name} (SQL)` } });
    expect((await reader('bob')(PET_NAME, { id: petId })).data).toEqual({ pet: { name } });
    expect((await reader('alice', ['orders:read', 'orders:write'])(PET_NAME, { id: petId })).data).toEqual({ pet: { name: `${name} (SQL)` } });
    expect((await anonymous(PET_NAME, { id: petId })).data).toEqual({ pet: { name: `${name} (SQL)` } });
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Rex" }) { id } }', { id: petId });
  });

  it('orders, for any holder of orders:read, are outdated by an order placed through the gateway', async () => {
    const token = await testToken(['orders:read'], 'carol');
    const orders = async () => (await gateway.graphql<{ orders: { totalCount: number } }>(ORDERS, { petId }, { token })).data?.orders.totalCount;
    const before = await orders();
    expect(await statementsDuring(orders)).toBe(0);
    await write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 5 }) { quantity } }', { petId });
    await write('mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }', { petId });
    expect(await orders()).toBe((before ?? 0) + 1);
  });
});

describe('what a write outdates, and what it leaves', () => {
  const PET = 'query ($id: ID!) { pet(id: $id) { name inventory { quantity } } }';
  const CATEGORY = 'query ($id: ID!) { category(id: $id) { name } }';
  const PAGE = 'query ($categoryId: ID!) { pets(filter: { categoryId: $categoryId }, orderBy: { field: NAME }) { totalCount nodes { name } } }';
  let kept: { id: string; name: string };

  beforeAll(async () => {
    const pet = await gateway.prisma.pet.create({ data: { name: 'Kept', categoryId: BigInt(categoryId) } });
    kept = { id: String(pet.id), name: 'Kept' };
  });

  it("a pet's rename outdates that pet and the lists of pets, not another pet nor a category", async () => {
    await anonymous(PET, { id: kept.id });
    await anonymous(CATEGORY, { id: categoryId });
    const page = await anonymous(PAGE, { categoryId });
    // Behind the gateway's back: an answer still showing the old value was kept.
    await gateway.prisma.pet.update({ where: { id: BigInt(kept.id) }, data: { name: 'Kept (SQL)' } });
    const category = await gateway.prisma.category.findUniqueOrThrow({ where: { id: BigInt(categoryId) } });
    await gateway.prisma.category.update({ where: { id: category.id }, data: { name: `${category.name} (SQL)` } });
    const outdatedBefore = await lookups('outdated');

    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Rex the Renamed" }) { id } }', { id: petId });

    expect((await anonymous(PET, { id: petId })).data).toEqual({ pet: { name: 'Rex the Renamed', inventory: expect.anything() } });
    expect((await anonymous(PET, { id: kept.id })).data).toEqual({ pet: { name: 'Kept', inventory: null } });
    expect((await anonymous(CATEGORY, { id: categoryId })).data).toEqual({ category: { name: category.name } });
    const after = await anonymous<{ pets: { nodes: Array<{ name: string }> } }>(PAGE, { categoryId });
    expect(after).not.toEqual(page);
    expect(after.data?.pets.nodes.map((pet) => pet.name)).toContain('Rex the Renamed');
    expect(await lookups('outdated')).toBeGreaterThan(outdatedBefore);
    await gateway.prisma.category.update({ where: { id: category.id }, data: { name: category.name } });
    await gateway.prisma.pet.update({ where: { id: BigInt(kept.id) }, data: { name: 'Kept' } });
  });

  it('a rename leaves lists in id order that do not show the pet; a pet that moves category outdates them', async () => {
    const COUNT = 'query ($categoryId: ID!) { pets(filter: { categoryId: $categoryId }) { totalCount } }';
    const count = async () => (await anonymous<{ pets: { totalCount: number } }>(COUNT, { categoryId })).data?.pets.totalCount;
    const before = await count();
    // Added behind the gateway's back: the count shows it only once its answer is outdated.
    const hidden = await gateway.prisma.pet.create({ data: { name: 'Hidden', categoryId: BigInt(categoryId) } });
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Kept again" }) { id } }', { id: kept.id });
    expect(await count()).toBe(before);
    await write('mutation ($id: ID!, $categoryId: ID!) { updatePet(id: $id, input: { categoryId: $categoryId }) { id } }', {
      id: kept.id,
      categoryId: emptyCategoryId,
    });
    expect(await count()).toBe((before ?? 0) + 1 - 1);
    expect(await fresh(COUNT, { categoryId })).toEqual({ data: { pets: { totalCount: before } } });
    await gateway.prisma.pet.delete({ where: { id: hidden.id } });
    await write('mutation ($id: ID!, $categoryId: ID!) { updatePet(id: $id, input: { categoryId: $categoryId, name: "Kept" }) { id } }', {
      id: kept.id,
      categoryId,
    });
  });

  it("a rename outdates the name-ordered pages of its pet's category, not another category's", async () => {
    const BY_NAME = 'query ($categoryId: ID!) { pets(filter: { categoryId: $categoryId }, orderBy: { field: NAME }) { nodes { id name } } }';
    const page = async (id: string) =>
      (await anonymous<{ pets: { nodes: Array<{ name: string }> } }>(BY_NAME, { categoryId: id })).data?.pets.nodes.map((pet) => pet.name);
    const elsewhere = await gateway.prisma.category.create({ data: { name: 'Elsewhere' } });
    await gateway.prisma.pet.create({ data: { name: 'Far', categoryId: elsewhere.id } });
    const otherPage = await page(String(elsewhere.id));
    await page(categoryId);
    // Added behind the gateway's back: shown only once that page is outdated.
    await gateway.prisma.pet.create({ data: { name: 'Aardvark', categoryId: elsewhere.id } });
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Zed" }) { id } }', { id: kept.id });
    expect(await page(String(elsewhere.id))).toEqual(otherPage);
    expect(await page(categoryId)).toContain('Zed');
    // A pet the page does not show, renamed into it: the first by name of its category.
    const FIRST = 'query ($categoryId: ID!) { pets(first: 1, filter: { categoryId: $categoryId }, orderBy: { field: NAME }) { nodes { id name } } }';
    const first = async () => (await anonymous<{ pets: { nodes: Array<{ name: string }> } }>(FIRST, { categoryId })).data?.pets.nodes[0]?.name;
    expect(await first()).not.toBe('Zed');
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Aaa first" }) { id } }', { id: kept.id });
    expect(await first()).toBe('Aaa first');
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { name: "Kept" }) { id } }', { id: kept.id });
  });

  it('a rename outdates the first pages by name of its category only when it lands among their rows, and of its status only', async () => {
    // A category of more than a first page's 100 rows can hold: a rename to its end lands beyond them all.
    const { category: crowded, far } = await crowdedCategory(gateway.prisma);
    const near = await gateway.prisma.pet.create({ data: { name: 'Pet 501', categoryId: crowded.id } });
    await gateway.prisma.pet.createMany({ data: [{ name: 'Pending one', categoryId: crowded.id, status: 'pending' }] });
    const FIRST = 'query ($categoryId: ID!, $status: PetStatus) { pets(first: 20, filter: { categoryId: $categoryId, status: $status }, orderBy: { field: NAME }) { nodes { id name } } }';
    const CONTAINING = 'query ($categoryId: ID!) { pets(first: 20, filter: { categoryId: $categoryId, nameContains: "Aa" }, orderBy: { field: NAME }) { nodes { id name } } }';
    const names = async (query: string, status?: string) =>
      (await anonymous<{ pets: { nodes: Array<{ name: string }> } }>(query, { categoryId: String(crowded.id), ...(status ? { status } : {}) })).data?.pets.nodes.map((pet) => pet.name);
    const rename = (id: bigint, name: string) => write('mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id } }', { id: String(id), name });
    const first = await names(FIRST);
    const firstPending = await names(FIRST, 'PENDING');
    expect(firstPending).toEqual(['Pending one']);
    expect(await names(CONTAINING)).toEqual([]);
    // Behind the gateway's back: shown only once an answer is outdated.
    await gateway.prisma.pet.createMany({ data: [{ name: 'Aaa hidden', categoryId: crowded.id }, { name: 'Aaa pending', categoryId: crowded.id, status: 'pending' }] });
    const outdated = await lookups('outdated');

    // Last by name, past the first 100: no first page of the category can show it.
    await rename(far.id, 'Zzz far');
    expect(await names(FIRST)).toEqual(first);
    expect(await names(FIRST, 'PENDING')).toEqual(firstPending);
    // A page narrowed by name is outdated by any rename in the category.
    expect(await names(CONTAINING)).toEqual(['Aaa hidden', 'Aaa pending']);
    expect(await lookups('outdated')).toBe(outdated + 1);

    // Second by name: among the first page's rows, so that page goes; the pending pets' first page stays.
    await rename(near.id, 'Aab near');
    expect(await names(FIRST)).toEqual(['Aaa hidden', 'Aaa pending', 'Aab near', ...first!.slice(0, 17)]);
    expect(await names(FIRST, 'PENDING')).toEqual(firstPending);
    // Moving into the pending pets' first page is a status change: it outdates every list of pets.
    await write('mutation ($id: ID!) { updatePet(id: $id, input: { status: PENDING }) { id } }', { id: String(near.id) });
    expect(await names(FIRST, 'PENDING')).toEqual(['Aaa pending', 'Aab near', 'Pending one']);
  });

  it('a stock count that leaves the status outdates the entry and the totals, not the lists of entries; one that moves it outdates them', async () => {
    const COUNT = 'query { inventory(filter: { status: AVAILABLE }) { totalCount } }';
    const SUMMARY = 'query { inventorySummary { status quantity } }';
    const count = async () => (await anonymous<{ inventory: { totalCount: number } }>(COUNT)).data?.inventory.totalCount;
    const available = async () =>
      (await anonymous<{ inventorySummary: Array<{ status: string; quantity: number }> }>(SUMMARY)).data?.inventorySummary.find((total) => total.status === 'AVAILABLE')
        ?.quantity;
    const stocked = await gateway.prisma.pet.create({
      data: { name: 'Counted', categoryId: BigInt(categoryId), inventory: { create: { quantity: 4, status: 'available' } } },
    });
    const before = await count();
    const quantity = await available();
    // Behind the gateway's back: an entry the count shows only once its answer is outdated.
    const unseen = await gateway.prisma.pet.create({
      data: { name: 'Unseen', categoryId: BigInt(categoryId), inventory: { create: { quantity: 1, status: 'available' } } },
    });
    await write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 6 }) { quantity } }', { petId: String(stocked.id) });
    expect(await count()).toBe(before);
    expect(await available()).toBe((quantity ?? 0) + 2 + 1);
    await write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 0 }) { quantity } }', { petId: String(stocked.id) });
    expect(await count()).toBe((before ?? 0) + 1 - 1);
    expect(await fresh(COUNT)).toEqual({ data: { inventory: { totalCount: before } } });
    await gateway.prisma.pet.delete({ where: { id: unseen.id } });
  });

  it("an order outdates the orders of its pet, not another pet's", async () => {
    const ORDERS = 'query ($petId: ID!) { orders(filter: { petId: $petId }) { totalCount } }';
    const orders = async (id: string) =>
      (await gateway.graphql<{ orders: { totalCount: number } }>(ORDERS, { petId: id }, { token: await testToken(['orders:read'], 'dave') })).data?.orders
        .totalCount;
    const other = await gateway.prisma.pet.create({
      data: { name: 'Stocked', categoryId: BigInt(categoryId), inventory: { create: { quantity: 9, status: 'available' } } },
    });
    await write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 9 }) { quantity } }', { petId });
    const mine = await orders(petId);
    // Placed behind the gateway's back: shown only once the answer is outdated.
    await gateway.prisma.order.create({ data: { petId: BigInt(petId), quantity: 1 } });
    await write('mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }', { petId: String(other.id) });
    expect(await orders(petId)).toBe(mine);
    await write('mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }', { petId });
    expect(await orders(petId)).toBe((mine ?? 0) + 2);
  });

  it('a stock entry made for a pet that had none shows in the answer that found none', async () => {
    expect((await anonymous(PET, { id: kept.id })).data).toEqual({ pet: { name: 'Kept', inventory: null } });
    await write('mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 3 }) { quantity } }', { petId: kept.id });
    expect((await anonymous(PET, { id: kept.id })).data).toEqual({ pet: { name: 'Kept', inventory: { quantity: 3 } } });
  });

  it('a pet created with the id a lookup found nothing under shows there', async () => {
    const [sequence] = await gateway.prisma.$queryRaw<Array<{ next: bigint }>>`
      SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next FROM pets_id_seq`;
    const id = String(sequence?.next);
    expect((await anonymous(PET, { id })).data).toEqual({ pet: null });
    const created = await write<{ createPet: { id: string } }>('mutation ($input: NewPet!) { createPet(input: $input) { id } }', {
      input: { name: 'Newcomer', categoryId },
    });
    expect(created.createPet.id).toBe(id);
    expect((await anonymous(PET, { id })).data).toEqual({ pet: { name: 'Newcomer', inventory: null } });
  });
});

describe('identical requests at the same moment', () => {
  it('share one execution: the first runs, the others wait for its answer', async () => {
    const query = 'query Shared($id: ID!) { category(id: $id) { name pets { totalCount } } }';
    const variables = { id: emptyCategoryId };
    const sharedBefore = await lookups('shared');
    // Hold the first execution in the database until all five have arrived.
    const blocker = new pg.Client({ connectionString: gateway.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE categories IN ACCESS EXCLUSIVE MODE');
    gateway.statements.length = 0;
    const answers = Promise.all(Array.from({ length: 5 }, () => anonymous(query, variables)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await blocker.query('COMMIT');
    await blocker.end();
    const [first, ...rest] = await answers;
    expect(first?.errors).toBeUndefined();
    for (const answer of rest) expect(answer).toEqual(first);
    expect(gateway.statements.filter((sql) => sql.includes('"categories"'))).toHaveLength(1);
    expect(await lookups('shared')).toBe(sharedBefore + 4);
  });
});

describe('bounds', () => {
  const small = useTestGateway({ responseCache: { ...settings, maxEntries: 2, maxBytes: 400 } });

  it('keeps at most RESPONSE_CACHE_MAX_ENTRIES answers and RESPONSE_CACHE_MAX_BYTES of them, least recently used dropped first', async () => {
    const categories = await Promise.all(['One', 'Two', 'Three'].map((name) => small.prisma.category.create({ data: { name } })));
    const read = async (id: bigint) => (await small.graphql('query ($id: ID!) { category(id: $id) { name } }', { id: String(id) }, { token: null })).data;
    for (const category of categories) await read(category.id);
    // Renamed behind its back: the first answer was dropped (it shows the new name), the last two were kept.
    for (const category of categories) await small.prisma.category.update({ where: { id: category.id }, data: { name: `${category.name}!` } });
    expect(await read(categories[0]!.id)).toEqual({ category: { name: 'One!' } });
    expect(await read(categories[2]!.id)).toEqual({ category: { name: 'Three' } });
    expect(await metric('petstore_response_cache_entries', small.baseUrl)).toBe(2);
    const bytes = await metric('petstore_response_cache_bytes', small.baseUrl);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(400);
    // An answer larger than the byte bound is not kept at all.
    for (let i = 0; i < 5; i++) await small.prisma.category.create({ data: { name: `Long ${i}`, description: 'x'.repeat(100) } });
    const big = 'query { categories(first: 50) { nodes { id name description } } }';
    await small.graphql(big, {}, { token: null });
    await small.prisma.category.update({ where: { id: categories[0]!.id }, data: { name: 'One!!' } });
    const again = await small.graphql<{ categories: { nodes: Array<{ name: string }> } }>(big, {}, { token: null });
    expect(again.data?.categories.nodes.map((category) => category.name)).toContain('One!!');
  });
});

describe('the body as sent', () => {
  const post = (contentType: string, body: string) =>
    fetch(`${gateway.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': contentType, accept: 'application/json' }, body });

  it('is what GraphQL answers from: JSON under either of its media types, a miss and then a hit with the same answer', async () => {
    const query = `{ pet(id: "${petId}") { name } }`;
    const { name } = await gateway.prisma.pet.findUniqueOrThrow({ where: { id: BigInt(petId) } });
    for (const contentType of ['application/json', 'application/graphql+json']) {
      const hitsBefore = await lookups('hit');
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await post(contentType, JSON.stringify({ query }));
        expect(response.status).toBe(200);
        expect(((await response.json()) as GraphQLAnswer).data).toEqual({ pet: { name } });
      }
      expect(await lookups('hit')).toBe(hitsBefore + 1);
    }
  });

  it('that is not a GraphQL request is refused as without the cache, every time', async () => {
    const refusals: Array<[body: string, message: string]> = [
      [`{"query": "{ pet(id: ${petId}`, 'POST body sent invalid JSON.'],
      ['null', 'POST body is expected to be object but received null'],
      ['"text"', 'POST body is expected to be object but received string'],
      ['{"query": 1}', 'Expected "query" param to be a string, but given number.'],
    ];
    for (const [body, message] of refusals) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await post('application/json', body);
        expect(response.status).toBe(400);
        const answer = (await response.json()) as GraphQLAnswer;
        expect(answer.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([[message, 'VALIDATION_FAILED']]);
      }
    }
  });
});

describe('what is never cached', () => {
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
  const shortLived = useTestGateway({ responseCache: { ...settings, ttlMs: 300 } });

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
  let otherId = '';
  let categoryOfBoth = '';
  // Where the instances keep the write log in Redis.
  let sharedPrefix = '';
  /** The answers the instances have put in Redis for one another. */
  const answersInRedis = async () => {
    const redis = new Redis(REDIS_URL);
    try {
      return new Set(await redis.keys(`${sharedPrefix}answer:*`));
    } finally {
      redis.disconnect();
    }
  };
  /** Until `count` answers not in `before` are in Redis (each is put once its request is answered). */
  const untilPut = (before: Set<string>, count: number) =>
    waitFor(async () => [...(await answersInRedis())].filter((key) => !before.has(key)).length >= count, `${count} more answers in Redis`);
  /** One more instance sharing the write log, its Redis reached through a fault proxy; and Redis' MONITOR. */
  const instanceBehindProxy = async () => {
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: 6379 });
    const instance = await startProcess(database.url, {
      RESPONSE_CACHE_TTL_MS: '60000',
      EVENTS_CHANNEL_PREFIX: sharedPrefix.slice(0, -'response-cache:'.length),
      REDIS_URL: proxy.urlFor(REDIS_URL),
      REDIS_COMMAND_TIMEOUT_MS: '5000',
    });
    const watcher = new Redis(REDIS_URL);
    const monitor = await watcher.monitor();
    const close = async () => {
      proxy.set('pass');
      monitor.disconnect();
      watcher.disconnect();
      await instance.stop();
      await proxy.close();
    };
    return { proxy, instance, monitor, close };
  };

  beforeAll(async () => {
    database = await migratedDatabase();
    const category = await database.prisma.category.create({ data: { name: 'Shared' } });
    id = String((await database.prisma.pet.create({ data: { name: 'Before', categoryId: category.id } })).id);
    otherId = String((await database.prisma.pet.create({ data: { name: 'Other', categoryId: category.id } })).id);
    categoryOfBoth = String(category.id);
    // Budgets that do not refill within a test: what each caller is charged shows in its budget left.
    const cached = { RESPONSE_CACHE_TTL_MS: '60000', EVENTS_CHANNEL_PREFIX: channelPrefix(), COST_BUDGET_REFILL_PER_SECOND: '0.001' };
    sharedPrefix = `${cached.EVENTS_CHANNEL_PREFIX}response-cache:`;
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
      (await postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(instance.baseUrl, { query: PET_NAME, variables: { id } })).body.data?.pet.name;
    expect(await name(reader)).toBe('Before');
    expect(await name(isolated)).toBe('Before');
    const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id, name: `After ${randomUUID().slice(0, 8)}` } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    const renamed = (rename.body.data as { updatePet: { name: string } }).updatePet.name;
    expect(await name(reader)).toBe(renamed);
    expect(await name(writer)).toBe(renamed);
    expect(await name(isolated)).toBe('Before');
    const metrics = await (await fetch(`${reader.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/petstore_response_cache_lookups_total\{result="miss"\} [1-9]/);
  });

  it('a write through one instance outdates on the others the answers that depend on it, and only those', async () => {
    const read = async <T>(instance: GatewayProcess, query: string, variables: Record<string, unknown>) =>
      (await postGraphQL<GraphQLAnswer<T>>(instance.baseUrl, { query, variables })).body.data;
    const PAGE = 'query ($id: ID!) { category(id: $id) { name pets { nodes { name } } } }';
    const CATEGORY_NAME = 'query ($id: ID!) { category(id: $id) { name } }';
    await read(reader, PET_NAME, { id: otherId });
    await read(reader, CATEGORY_NAME, { id: categoryOfBoth });
    const page = await read<{ category: { pets: { nodes: Array<{ name: string }> } } }>(reader, PAGE, { id: categoryOfBoth });
    // Behind the gateways' backs: what still shows the old value was kept.
    await database.prisma.pet.update({ where: { id: BigInt(otherId) }, data: { name: 'Other (SQL)' } });
    await database.prisma.category.update({ where: { id: BigInt(categoryOfBoth) }, data: { name: 'Shared (SQL)' } });
    const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
    const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id, name: renamed } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    // Outdated on the reader: the list holding the renamed pet.
    const after = await read<{ category: { pets: { nodes: Array<{ name: string }> } } }>(reader, PAGE, { id: categoryOfBoth });
    expect(after?.category.pets.nodes.map((pet) => pet.name)).toContain(renamed);
    expect(after).not.toEqual(page);
    // Kept on the reader: another pet, and a category answer that names no pet.
    expect(await read(reader, PET_NAME, { id: otherId })).toEqual({ pet: { name: 'Other' } });
    expect(await read(reader, CATEGORY_NAME, { id: categoryOfBoth })).toEqual({ category: { name: 'Shared' } });
  });

  it('a write stamped without an entry in the shared log (trimmed, or by an earlier version) outdates every answer from before it, not those after', async () => {
    const pet = await database.prisma.pet.create({ data: { name: 'Logged', categoryId: BigInt(categoryOfBoth) } });
    const other = await database.prisma.pet.create({ data: { name: 'Untouched', categoryId: BigInt(categoryOfBoth) } });
    const name = async (id: bigint) =>
      (await postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(reader.baseUrl, { query: PET_NAME, variables: { id: String(id) } })).body.data?.pet.name;
    const hits = () => metric('petstore_response_cache_lookups_total{result="hit"}', reader.baseUrl);
    expect(await name(pet.id)).toBe('Logged');
    expect(await name(other.id)).toBe('Untouched');
    const kept = await hits();
    expect(await name(pet.id)).toBe('Logged');
    expect(await hits()).toBe(kept + 1);
    // Behind the gateways' backs, then stamped as a write is, but with no entry in the log.
    await database.prisma.pet.update({ where: { id: pet.id }, data: { name: 'Unlogged' } });
    await database.prisma.pet.update({ where: { id: other.id }, data: { name: 'Untouched (SQL)' } });
    const redis = new Redis(REDIS_URL);
    try {
      const sequence = await redis.incr(`${sharedPrefix}seq`);
      await redis.set(`${sharedPrefix}tag:Pet:${pet.id}`, sequence, 'PX', 60_000);
    } finally {
      redis.disconnect();
    }
    // The log cannot say what that write changed: both answers from before it go.
    expect(await name(pet.id)).toBe('Unlogged');
    expect(await name(other.id)).toBe('Untouched (SQL)');
    // What is computed after it is kept and served again.
    const after = await hits();
    expect(await name(pet.id)).toBe('Unlogged');
    expect(await hits()).toBe(after + 1);
  });

  it('a rename by an instance of an earlier version, which does not say where it landed, outdates the first pages by name of its category on the others', async () => {
    const { category: crowded, far } = await crowdedCategory(database.prisma);
    const FIRST = 'query ($categoryId: ID!) { pets(first: 20, filter: { categoryId: $categoryId }, orderBy: { field: NAME }) { nodes { id name } } }';
    const names = async () =>
      (await postGraphQL<GraphQLAnswer<{ pets: { nodes: Array<{ name: string }> } }>>(reader.baseUrl, { query: FIRST, variables: { categoryId: String(crowded.id) } })).body.data?.pets.nodes.map(
        (pet) => pet.name,
      );
    // Renames by this version, landing last: the reader keeps its first page.
    const renameFar = async (name: string) => {
      const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: String(far.id), name } }, { authorization: `Bearer ${await testToken()}` });
      expect(rename.body.errors).toBeUndefined();
    };
    // (A first write of the shared log starts its epoch, which outdates what came before: not this test's point.)
    await renameFar('Zzz far');
    const first = await names();
    // Behind the gateways' backs: shown only once the reader's page is outdated.
    await database.prisma.pet.create({ data: { name: 'Aaa hidden', categoryId: crowded.id } });
    await renameFar('Zzz farther');
    expect(await names()).toEqual(first);
    // A rename as an earlier version stamps and logs it, with only the tags it knew.
    const redis = new Redis(REDIS_URL);
    try {
      const tags = ['*:write', 'Pet:any', `Pet:${far.id}`, 'Pet:list:name', `Pet:list:name@categoryId=${crowded.id}`];
      const sequence = await redis.incr(`${sharedPrefix}seq`);
      for (const tag of tags) await redis.set(`${sharedPrefix}tag:${tag}`, sequence, 'PX', 60_000);
      await redis.xadd(`${sharedPrefix}log`, 'MAXLEN', '~', '10000', '*', 's', String(sequence), 't', JSON.stringify(tags));
    } finally {
      redis.disconnect();
    }
    expect(await names()).toEqual(['Aaa hidden', ...first!.slice(0, 19)]);
  });

  it("an answer one instance computed is a hit on the others, until a write it depends on; each caller pays its cost", async () => {
    const pet = await database.prisma.pet.create({ data: { name: 'Seen once', categoryId: BigInt(categoryOfBoth) } });
    const variables = { id: String(pet.id) };
    // The whole answer: its body, and `cost` (its extensions.cost).
    const answer = (instance: GatewayProcess, token?: string) =>
      postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(instance.baseUrl, { query: PET_NAME, variables }, token ? { authorization: `Bearer ${token}` } : {});
    const read = async (instance: GatewayProcess) => (await answer(instance)).body;
    const peerHits = async (instance: GatewayProcess) => metric('petstore_response_cache_lookups_total{result="peer"}', instance.baseUrl);
    const putBefore = await answersInRedis();
    expect((await read(reader)).data).toEqual({ pet: { name: 'Seen once' } });
    // An answer is put in Redis once it is sent, not before: the writer may otherwise ask first, and miss.
    await untilPut(putBefore, 1);
    // Behind the gateways' backs: only an answer kept from before shows the old name.
    await database.prisma.pet.update({ where: { id: pet.id }, data: { name: 'Changed in SQL' } });
    const before = await peerHits(writer);
    expect((await read(writer)).data).toEqual({ pet: { name: 'Seen once' } });
    expect(await peerHits(writer)).toBe(before + 1);
    // Kept there now: the next one is a hit of its own.
    expect((await read(writer)).data).toEqual({ pet: { name: 'Seen once' } });
    expect(await peerHits(writer)).toBe(before + 1);
    // Without Redis, no other instance's answer: what the database holds.
    expect((await read(isolated)).data).toEqual({ pet: { name: 'Changed in SQL' } });

    // Each caller is charged the answer's cost and told its own budget left, not the one who computed it.
    const scopes = [...allScopes, `peer:${randomUUID()}`];
    const spender = await testToken(scopes, `spender-${randomUUID()}`);
    const newcomer = await testToken(scopes, `newcomer-${randomUUID()}`);
    const beforeSpending = await answersInRedis();
    expect((await postGraphQL(reader.baseUrl, { query: CATALOGUE }, { authorization: `Bearer ${spender}` })).body.errors).toBeUndefined();
    const computed = await answer(reader, spender);
    await untilPut(beforeSpending, 2);
    const taken = await answer(writer, newcomer);
    expect(taken.body).toEqual(computed.body);
    const actual = computed.cost?.actual ?? NaN;
    expect(taken.cost).toEqual({ estimated: computed.cost?.estimated, actual, budgetLeft: 10_000 - actual });
    expect(computed.cost?.budgetLeft).toBeLessThan(10_000 - actual);

    // A write through the reader outdates what the writer took from it.
    const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
    const rename = await postGraphQL(reader.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: variables.id, name: renamed } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    expect((await read(writer)).data).toEqual({ pet: { name: renamed } });
    expect((await read(reader)).data).toEqual({ pet: { name: renamed } });
  });

  it("another instance's answer a write has outdated costs the caller once: what was taken for it goes back, the run is charged", async () => {
    const pet = await database.prisma.pet.create({ data: { name: 'Shared once', categoryId: BigInt(categoryOfBoth) } });
    const variables = { id: String(pet.id) };
    const scopes = [...allScopes, `outdated:${randomUUID()}`];
    const answer = async (instance: GatewayProcess, subject: string) =>
      postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(instance.baseUrl, { query: PET_NAME, variables }, { authorization: `Bearer ${await testToken(scopes, subject)}` });
    // Computed on the reader, so put in Redis for the writer; then outdated there by a write through the reader.
    const computed = await answer(reader, `computer-${randomUUID()}`);
    const actual = computed.cost?.actual ?? NaN;
    const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
    const rename = await postGraphQL(reader.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: variables.id, name: renamed } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    const outdated = await metric('petstore_response_cache_lookups_total{result="miss"}', writer.baseUrl);
    const run = await answer(writer, `caller-${randomUUID()}`);
    expect(run.body.data).toEqual({ pet: { name: renamed } });
    expect(await metric('petstore_response_cache_lookups_total{result="miss"}', writer.baseUrl)).toBe(outdated + 1);
    expect(run.cost).toEqual({ estimated: computed.cost?.estimated, actual, budgetLeft: 10_000 - actual });
  });

  it('a lookup begun after a write answered sees it, while a read of the write log from before the write is still on its way', { timeout: 60_000 }, async () => {
    const pets = await Promise.all(
      Array.from({ length: 20 }, (_, i) => database.prisma.pet.create({ data: { name: `Waiting ${i}`, categoryId: BigInt(categoryOfBoth) } })),
    );
    // Redis' answers to this instance held back on demand: a read it sent has run, and the instance has not heard.
    const { proxy, instance: late, monitor, close } = await instanceBehindProxy();
    // Told when Redis runs a read of the write log this instance sent (it writes nothing: its only script naming the log is the read).
    let readRun = () => {};
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (/^eval(sha)?$/i.test(args[0] ?? '') && args.includes(`${sharedPrefix}log`) && proxy.sources().has(source)) readRun();
    });
    const name = async (id: bigint) =>
      (await postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(late.baseUrl, { query: PET_NAME, variables: { id: String(id) } })).body.data?.pet.name;
    const names = pets.map((pet) => pet.name);
    try {
      // Every answer kept, and read again (the caller's rate limit and budget then have shares in hand: nothing in Redis on the way to the lookup).
      for (let round = 0; round < 2; round++) expect(await Promise.all(pets.map((pet) => name(pet.id)))).toEqual(names);
      // (The lookup's time limit is 200 ms: a try whose held read ran out of it shows nothing, and is made again.)
      let shown = false;
      // Minted before any read is held: the held read's time limit runs while the write is made.
      const writing = { authorization: `Bearer ${await testToken()}` };
      for (let attempt = 1; attempt <= 5 && !shown; attempt++) {
        const first = pets[0]!;
        const heldRead = new Promise<void>((resolve) => (readRun = resolve));
        proxy.set('hold-answers');
        const before = name(first.id);
        await heldRead;
        const renamed = `Waiting, renamed ${attempt}`;
        const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: String(first.id), name: renamed } }, writing);
        expect(rename.body.errors).toBeUndefined();
        const after = Promise.all(pets.map((pet) => name(pet.id)));
        await new Promise((resolve) => setTimeout(resolve, 30));
        proxy.set('pass');
        const [beforeName, afterNames] = await Promise.all([before, after]);
        // Every lookup begun after the write answered saw it, whatever the read on its way said.
        expect(afterNames).toEqual([renamed, ...names.slice(1)]);
        names[0] = renamed;
        // The held read, run before the write, answered the lookup that sent it with the answer kept from before.
        shown = beforeName !== renamed;
      }
      expect(shown).toBe(true);
    } finally {
      await close();
    }
  });

  // Last: it starts the shared log's sequence again for every instance here.
  it('a new instance takes the shared write log from its start once, however many lookups come meanwhile', { timeout: 60_000 }, async () => {
    const pets = await Promise.all(
      Array.from({ length: 20 }, (_, i) => database.prisma.pet.create({ data: { name: `Newcomer's ${i}`, categoryId: BigInt(categoryOfBoth) } })),
    );
    // A write through the gateway: the shared log has an entry (whatever this block did before).
    const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: String(pets[0]!.id), name: "Newcomer's first" } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    pets[0]!.name = "Newcomer's first";
    // Redis through a proxy that holds every command for a moment: twenty lookups are on their way together.
    const { proxy, instance: newcomer, monitor, close } = await instanceBehindProxy();
    const marker = `${sharedPrefix}marker:${randomUUID()}`;
    let fromStart = 0;
    let markerSeen: () => void = () => {};
    const told = new Promise<void>((resolve) => (markerSeen = resolve));
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.includes(marker)) markerSeen();
      // The read script's calls (EVALSHA, or EVAL the first time; MONITOR also tells the XREAD it runs) asking from the log's start.
      else if (/^eval(sha)?$/i.test(args[0] ?? '') && args.includes(`${sharedPrefix}log`) && args.includes('0-0')) fromStart += 1;
    });
    const redis = new Redis(REDIS_URL);
    try {
      proxy.set('freeze');
      const answers = Promise.all(
        pets.map((pet) => postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(newcomer.baseUrl, { query: PET_NAME, variables: { id: String(pet.id) } })),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      proxy.set('pass');
      expect((await answers).map((answer) => answer.body.data?.pet.name)).toEqual(pets.map((pet) => pet.name));
      // Told after every command before it.
      await redis.get(marker);
      await told;
      expect(fromStart).toBe(1);
    } finally {
      redis.disconnect();
      await close();
    }
  });

  it("a sequence Redis lost (its key evicted, the epoch's kept) starts again from a new epoch: its low numbers outdate what was kept", async () => {
    const pet = await database.prisma.pet.create({ data: { name: 'Before the loss', categoryId: BigInt(categoryOfBoth) } });
    const name = async () =>
      (await postGraphQL<GraphQLAnswer<{ pet: { name: string } }>>(reader.baseUrl, { query: PET_NAME, variables: { id: String(pet.id) } })).body.data?.pet.name;
    expect(await name()).toBe('Before the loss');
    const redis = new Redis(REDIS_URL);
    try {
      await redis.del(`${sharedPrefix}seq`);
    } finally {
      redis.disconnect();
    }
    const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
    const rename = await postGraphQL(writer.baseUrl, { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', variables: { id: String(pet.id), name: renamed } }, { authorization: `Bearer ${await testToken()}` });
    expect(rename.body.errors).toBeUndefined();
    expect(await name()).toBe(renamed);
  });
});
