import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * The totalCount of a list without a filter is the table's count kept by triggers (row_counts,
 * src/database/row-counts.ts), not a scan: after every kind of write, through the API and around it,
 * it must say what counting the rows says. Both engines answer each document here (the differential
 * compares every answer with graphql-js').
 */
const gateway = useTestGateway();

const COUNTS = '{ categories { totalCount } pets { totalCount } orders { totalCount } inventory { totalCount } }';
type Counts = Record<'categories' | 'pets' | 'orders' | 'inventory', { totalCount: number }>;

/** What each list's totalCount says (asked twice: yoga's first answer, then the plan's). */
async function told() {
  let answer: Counts | undefined;
  for (let time = 0; time < 2; time++) {
    const response = await gateway.graphql<Counts>(COUNTS);
    expect(response.errors).toBeUndefined();
    answer = response.data!;
  }
  return {
    categories: answer!.categories.totalCount,
    pets: answer!.pets.totalCount,
    orders: answer!.orders.totalCount,
    inventory: answer!.inventory.totalCount,
  };
}

/** What counting every row says. */
async function counted() {
  const db = gateway.prisma;
  return {
    categories: await db.category.count(),
    pets: await db.pet.count(),
    orders: await db.order.count(),
    inventory: await db.inventoryItem.count(),
  };
}

async function write<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) {
  const response = await gateway.graphql<T>(query, variables);
  expect(response.errors).toBeUndefined();
  return response.data!;
}

let categoryId = '';
beforeAll(async () => {
  categoryId = (await write<{ createCategory: { id: string } }>('mutation { createCategory(input: { name: "Counted" }) { id } }')).createCategory.id;
});

const newPet = async (name: string) =>
  (await write<{ createPet: { id: string } }>('mutation($input: NewPet!) { createPet(input: $input) { id } }', { input: { name, categoryId } })).createPet.id;
const stock = (petId: string, quantity: number) =>
  write('mutation($petId: ID!, $quantity: Int!) { updateInventory(petId: $petId, input: { quantity: $quantity }) { quantity } }', { petId, quantity });
const order = async (petId: string) =>
  (await write<{ placeOrder: { id: string } }>('mutation($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }', { petId })).placeOrder.id;

describe('totalCount of a list without a filter', () => {
  it('follows every write of the API: creating, stocking, ordering, cancelling, completing and deleting', async () => {
    expect(await told()).toEqual(await counted());
    const rex = await newPet('Rex');
    const fido = await newPet('Fido');
    // The first stock count creates the entry; the next changes it.
    await stock(rex, 5);
    await stock(rex, 4);
    expect(await told()).toEqual(await counted());
    const placed = await Promise.all([order(rex), order(rex), order(rex)]);
    await write('mutation($id: ID!) { cancelOrder(id: $id) { id } }', { id: placed[0] });
    await write('mutation($id: ID!) { completeOrder(id: $id) { id } }', { id: placed[1] });
    await write('mutation($id: ID!) { completeOrder(id: $id) { id } }', { id: placed[2] });
    expect(await told()).toEqual(await counted());
    // Its finished orders and its entry go with it (the entry by ON DELETE CASCADE).
    await write('mutation($id: ID!) { deletePet(id: $id) { id } }', { id: rex });
    await write('mutation($id: ID!) { deletePet(id: $id) { id } }', { id: fido });
    const empty = (await write<{ createCategory: { id: string } }>('mutation { createCategory(input: { name: "Empty" }) { id } }')).createCategory.id;
    await write('mutation($id: ID!) { deleteCategory(id: $id) { id } }', { id: empty });
    expect(await told()).toEqual(await counted());
  });

  it('follows writes made around the gateway, and leaves out what was rolled back', async () => {
    const db = gateway.prisma;
    const pet = await db.pet.create({ data: { name: 'Around', categoryId: BigInt(categoryId) } });
    await db.$executeRaw`INSERT INTO orders (pet_id, quantity, complete) SELECT ${pet.id}, 1, true FROM generate_series(1, 250)`;
    expect(await told()).toEqual(await counted());
    await db.$executeRaw`DELETE FROM orders WHERE pet_id = ${pet.id} AND id % 2 = 0`;
    expect(await told()).toEqual(await counted());
    const before = await counted();
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO orders (pet_id, quantity) SELECT ${pet.id}, 1 FROM generate_series(1, 10)`;
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await told()).toEqual(before);
  });

  // Not on the embedded database: its one session runs one transaction at a time, so writers never overlap there.
  it.skipIf(Boolean(inject('embeddedTemplate')))('stays exact under concurrent writers, more of them at once than the kept rows', async () => {
    const pet = await newPet('Busy');
    await stock(pet, 1_000);
    // Writers each holding their row of row_counts until they commit, more of them than it has rows.
    const writers = await Promise.all(Array.from({ length: 24 }, async () => {
      const client = new pg.Client({ connectionString: gateway.databaseUrl });
      await client.connect();
      await client.query('BEGIN');
      await client.query('INSERT INTO orders (pet_id, quantity, complete) SELECT $1::bigint, 1, true FROM generate_series(1, 3)', [pet]);
      return client;
    }));
    // The gateway's own writes meanwhile, each its own transaction.
    const placed = Promise.all(Array.from({ length: 20 }, () => order(pet)));
    await Promise.all(writers.map(async (client) => {
      await client.query('COMMIT');
      await client.end();
    }));
    await placed;
    expect(await told()).toEqual(await counted());
    // Those beyond its rows added rows of their own rather than wait.
    const [{ rows }] = await gateway.prisma.$queryRaw<[{ rows: bigint }]>`SELECT count(*) AS rows FROM row_counts`;
    expect(Number(rows)).toBeGreaterThanOrEqual(24);
  });

  it('is what a filtered list counts when the filter lets every row through', async () => {
    const text = '{ all: orders { totalCount } open: orders(filter: { complete: false }) { totalCount } done: orders(filter: { complete: true }) { totalCount } }';
    const answer = await write<Record<'all' | 'open' | 'done', { totalCount: number }>>(text);
    expect(answer.all.totalCount).toBe(answer.open.totalCount + answer.done.totalCount);
    expect(gateway.differential.mismatches).toEqual([]);
  });

  it('says 0 for a table emptied by TRUNCATE, and counts what comes after', async () => {
    const db = gateway.prisma;
    const pet = await db.pet.create({ data: { name: 'Last', categoryId: BigInt(categoryId) } });
    await db.$executeRaw`TRUNCATE orders`;
    expect((await told()).orders).toBe(0);
    await db.$executeRaw`INSERT INTO orders (pet_id, quantity) VALUES (${pet.id}, 1)`;
    expect(await told()).toEqual(await counted());
    expect(gateway.differential.mismatches).toEqual([]);
  });
});
