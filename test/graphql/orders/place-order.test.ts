import { beforeAll, describe, expect, it } from 'vitest';
import {
  CreatePetDocument,
  DeletePetDocument,
  OrderByIdDocument,
  PlaceOrderDocument,
  UpdateInventoryDocument,
} from '../../generated/graphql.js';
import { stockSteps } from '../../support/stock.js';
import { clientFor, codesOf, expectedStatus, expectError } from '../../support/client.js';
import { useTestGateway } from '../../support/gateway.js';
import { testToken } from '../../support/tokens.js';
import { bearer, databaseState, expectDocumentedError, type GraphQLAnswer, postGraphQL, send } from '../../support/http.js';

/**
 * placeOrder, driven through the API: it takes the quantity from the pet's
 * stock and records an open order (the last of the stock makes the pet
 * PENDING); it refuses more than the stock with INSUFFICIENT_STOCK, and a
 * quantity out of bounds with VALIDATION_FAILED, writing nothing; orders
 * placed at the same instant never take more than there is (PostgreSQL's row
 * locks), and an order placed as its pet is deleted either wins or finds no pet.
 * (Completing and cancelling: complete-and-cancel-order.test.ts; the events
 * an order publishes: test/subscriptions/.)
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = '';
/** A pet with 5 in stock and an open order, for the orders that must be refused. */
let rex = '';
beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
  [categoryId, rex] = [category.id.toString(), pet.id.toString()];
});

const { newPet, setStock, order, state, stored } = stockSteps(gateway, client, () => categoryId);

/** A pet added straight to the database, then given `quantity` in stock through the API; its id. */
async function petWithStock(quantity: number) {
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: BigInt(categoryId) } });
  await client.ok(UpdateInventoryDocument, { petId: pet.id.toString(), input: { quantity } });
  return pet.id;
}

/** Asserts that `work` leaves every table as it was. */
async function writesNothing(work: () => Promise<void>) {
  const before = await databaseState(gateway.prisma);
  await work();
  expect(await databaseState(gateway.prisma)).toBe(before);
}

describe('placeOrder', () => {
  it('takes the stock and records an open order; the pet stays AVAILABLE while stock is left', async () => {
    const petId = await newPet();
    await setStock(petId, 5);
    const placed = await order(petId, 2);
    expect(placed).toEqual({
      id: expect.stringMatching(/^\d+$/),
      petId,
      quantity: 2,
      shipDate: null,
      complete: false,
      pet: { id: petId, status: 'AVAILABLE', inventory: { quantity: 3, status: 'AVAILABLE' } },
    });
    expect(await stored(petId)).toEqual({
      status: 'available',
      stock: 3,
      entryStatus: 'available',
      orders: [{ quantity: 2, complete: false }],
    });
  });

  it('moves AVAILABLE → PENDING when it takes the last of the stock', async () => {
    const petId = await newPet();
    await setStock(petId, 2);
    const placed = await order(petId, 2);
    expect(placed.pet).toEqual({ id: petId, status: 'PENDING', inventory: { quantity: 0, status: 'PENDING' } });
    expect(await state(petId)).toEqual({ status: 'PENDING', inventory: { quantity: 0, status: 'PENDING' } });
  });

  it('keeps the ship date it is given, in ISO 8601', async () => {
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1, '2027-03-04T05:06:07.000Z');
    expect(placed.shipDate).toBe('2027-03-04T05:06:07.000Z');
    const { order: read } = await client.ok(OrderByIdDocument, { id: placed.id });
    expect(read?.shipDate).toBe('2027-03-04T05:06:07.000Z');
  });

  it('refuses more than the stock with INSUFFICIENT_STOCK, and takes nothing', async () => {
    const petId = await newPet();
    await setStock(petId, 3);
    const response = await client.send(PlaceOrderDocument, { input: { petId, quantity: 4 } });
    const error = expectError(response, 'INSUFFICIENT_STOCK');
    expect(error.message).toContain('3');
    expect(await stored(petId)).toEqual({ status: 'available', stock: 3, entryStatus: 'available', orders: [] });
  });

  it('refuses a PENDING pet (out of stock, order open) and a SOLD pet', async () => {
    const pending = await newPet();
    await setStock(pending, 1);
    await order(pending, 1);
    expectError(
      await client.send(PlaceOrderDocument, { input: { petId: pending, quantity: 1 } }),
      'INSUFFICIENT_STOCK',
    );
    expect((await stored(pending)).orders).toHaveLength(1);

    const sold = await newPet();
    await setStock(sold, 0);
    expectError(await client.send(PlaceOrderDocument, { input: { petId: sold, quantity: 1 } }), 'INSUFFICIENT_STOCK');
    expect(await stored(sold)).toEqual({ status: 'sold', stock: 0, entryStatus: 'sold', orders: [] });
  });

  it('refuses a pet that has no inventory entry, whatever its status', async () => {
    const petId = await newPet('AVAILABLE');
    expectError(await client.send(PlaceOrderDocument, { input: { petId, quantity: 1 } }), 'INSUFFICIENT_STOCK');
    expect(await stored(petId)).toEqual({ status: 'available', stock: null, entryStatus: null, orders: [] });
  });

  it('answers NOT_FOUND for a pet that does not exist', async () => {
    const before = await gateway.prisma.order.count();
    expectError(await client.send(PlaceOrderDocument, { input: { petId: '424242', quantity: 1 } }), 'NOT_FOUND');
    expect(await gateway.prisma.order.count()).toBe(before);
  });
});

describe('order quantities', () => {
  it('refuses 0, negative and more than 1000, naming quantity', async () => {
    await writesNothing(async () => {
      for (const quantity of [0, -1, 1001, 5000]) {
        const error = expectError(
          await client.send(PlaceOrderDocument, { input: { petId: rex, quantity } }),
          'VALIDATION_FAILED',
          'quantity',
        );
        expect(error.message).toContain('1 to 1000');
      }
    });
  });

  it('refuses a quantity that is not a whole number before it reaches the schema', async () => {
    await writesNothing(async () => {
      for (const quantity of [1.5, '2', 2 ** 31]) {
        const response = await client.sendUnchecked(PlaceOrderDocument, { input: { petId: rex, quantity } });
        const error = expectError(response, 'VALIDATION_FAILED');
        expect(error.message).toContain('quantity');
      }
    });
  });

  it('takes 1000 when there is that much in stock', async () => {
    const { createPet } = await client.ok(CreatePetDocument, { input: { name: 'Plenty', categoryId } });
    await client.ok(UpdateInventoryDocument, { petId: createPet.id, input: { quantity: 1000 } });
    const { placeOrder } = await client.ok(PlaceOrderDocument, { input: { petId: createPet.id, quantity: 1000 } });
    expect(placeOrder).toMatchObject({ quantity: 1000, pet: { inventory: { quantity: 0, status: 'PENDING' } } });
  });

  it.each([
    ['over Int', 2 ** 31],
    ['fractional', 1.5],
    ['a string', '5'],
    ['negative', -1],
    ['zero', 0],
    ['over the order limit', 1001],
  ])('a quantity %s: VALIDATION_FAILED', async (_what, quantity) => {
    await writesNothing(async () => {
      const answer = await postGraphQL<GraphQLAnswer>(
        gateway.baseUrl,
        {
          query: 'mutation ($pet: ID!, $q: Int!) { placeOrder(input: { petId: $pet, quantity: $q }) { id } }',
          variables: { pet: rex, q: quantity },
        },
        bearer(await testToken()),
      );
      expectDocumentedError(answer, 'VALIDATION_FAILED');
    });
  });
});

describe('ship dates', () => {
  const FIRST = '0001-01-01T00:00:00.000Z';
  const LAST = '9999-12-31T23:59:59.999Z';

  it('takes the first and the last instant of years 1 to 9999, and every read gives the date back', async () => {
    const petId = await newPet();
    await setStock(petId, 2);
    const placed = [await order(petId, 1, FIRST), await order(petId, 1, LAST)];
    expect(placed.map((one) => one.shipDate)).toEqual([FIRST, LAST]);
    const headers = bearer(await testToken());
    // One order by id, the orders page (the plans' own statement) and REST: the same dates, no error.
    for (const one of placed) {
      const { order: read } = await client.ok(OrderByIdDocument, { id: one.id });
      expect(read?.shipDate).toBe(one.shipDate);
    }
    const page = await postGraphQL<GraphQLAnswer<{ orders: { edges: Array<{ node: { id: string; shipDate: string } }> } }>>(
      gateway.baseUrl,
      { query: 'query ($pet: ID!) { orders(first: 10, filter: { petId: $pet }) { edges { node { id shipDate } } } }', variables: { pet: petId } },
      headers,
    );
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data!.orders.edges.map(({ node }) => node.shipDate)).toEqual([FIRST, LAST]);
    const rest = await send<Array<{ shipDate: string }>>(gateway.baseUrl, `/store/orders?petId=${petId}`, { headers });
    expect(rest.status).toBe(200);
    expect(rest.body.map((one) => one.shipDate)).toEqual([FIRST, LAST]);
  });

  it('refuses year 0 (1 BC to the database), naming shipDate, and writes nothing', async () => {
    await writesNothing(async () => {
      for (const shipDate of ['0000-12-31T23:59:59.999Z', '0000-06-01T00:00:00Z']) {
        const error = expectError(
          await client.send(PlaceOrderDocument, { input: { petId: rex, quantity: 1, shipDate } }),
          'VALIDATION_FAILED',
          'shipDate',
        );
        expect(error.message).toBe(`shipDate must be from ${FIRST} to ${LAST}`);
      }
    });
  });

  it('is held to the same years by the database, whoever writes', async () => {
    for (const shipDate of ['10000-01-01 00:00:00+00', '0001-12-31 23:59:59.999+00 BC']) {
      await expect(
        gateway.prisma.$executeRawUnsafe(`INSERT INTO orders (pet_id, quantity, ship_date) VALUES (${rex}, 1, '${shipDate}')`),
      ).rejects.toThrow(/orders_ship_date_in_range/);
    }
  });
});

describe('concurrent orders', () => {
  it('20 concurrent orders of 1 against a stock of 5: exactly 5 succeed, 15 get INSUFFICIENT_STOCK', async () => {
    const petId = await petWithStock(5);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.send(PlaceOrderDocument, { input: { petId: petId.toString(), quantity: 1 } }),
      ),
    );

    const succeeded = responses.filter((response) => !response.errors);
    const refused = responses.filter((response) => response.errors);
    expect(codesOf(responses).sort()).toEqual([...Array(15).fill('INSUFFICIENT_STOCK'), ...Array(5).fill('OK')]);
    for (const response of refused) {
      expect(response.errors).toHaveLength(1);
      expect(response.errors![0]!.extensions).toEqual({
        code: 'INSUFFICIENT_STOCK',
        status: expectedStatus.INSUFFICIENT_STOCK,
      });
      expect(response.data).toBeNull();
    }
    // Each success got its own order; the last one took the last unit.
    const orderIds = succeeded.map((response) => response.data!.placeOrder.id);
    expect(new Set(orderIds).size).toBe(5);
    expect(succeeded.map((response) => response.data!.placeOrder.pet.inventory!.quantity).sort()).toEqual([
      0, 1, 2, 3, 4,
    ]);

    // What was written: stock 0, exactly those 5 orders of 1, all open, and the pet PENDING.
    const entry = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId } });
    expect(entry).toMatchObject({ quantity: 0, status: 'pending' });
    const orders = await gateway.prisma.order.findMany({ where: { petId }, orderBy: { id: 'asc' } });
    expect(orders.map((row) => row.id.toString()).sort()).toEqual([...orderIds].sort());
    expect(orders.every((row) => row.quantity === 1 && !row.complete)).toBe(true);
    expect((await gateway.prisma.pet.findUniqueOrThrow({ where: { id: petId } })).status).toBe('pending');
  });

  it('concurrent orders of different sizes never take more than the stock', async () => {
    const petId = await petWithStock(10);
    const quantities = [3, 4, 2, 5, 1, 3, 2, 4];
    const responses = await Promise.all(
      quantities.map((quantity) => client.send(PlaceOrderDocument, { input: { petId: petId.toString(), quantity } })),
    );
    expect(codesOf(responses).every((code) => code === 'OK' || code === 'INSUFFICIENT_STOCK')).toBe(true);
    const taken = responses
      .filter((response) => !response.errors)
      .reduce((sum, response) => sum + response.data!.placeOrder.quantity!, 0);
    const entry = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId } });
    expect(entry.quantity).toBe(10 - taken);
    expect(entry.quantity).toBeGreaterThanOrEqual(0);
    // Whatever is left is less than every refused order asked for.
    for (const [index, response] of responses.entries()) {
      if (response.errors) expect(quantities[index]!).toBeGreaterThan(entry.quantity);
    }
    const written = await gateway.prisma.order.aggregate({ where: { petId }, _sum: { quantity: true } });
    expect(written._sum.quantity).toBe(taken);
  });

  it('an order placed while its pet is deleted either wins (and the delete is refused) or finds no pet', async () => {
    for (let round = 0; round < 10; round++) {
      const petId = (await petWithStock(1)).toString();
      const [placed, deleted] = await Promise.all([
        client.send(PlaceOrderDocument, { input: { petId, quantity: 1 } }),
        client.send(DeletePetDocument, { id: petId }),
      ]);
      const outcome = codesOf([placed, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await gateway.prisma.pet.count({ where: { id: BigInt(petId) } });
      const orders = await gateway.prisma.order.count({ where: { petId: BigInt(petId) } });
      expect({ outcome, left, orders }).toEqual(
        outcome === 'OK CONFLICT' ? { outcome, left: 1, orders: 1 } : { outcome, left: 0, orders: 0 },
      );
    }
  });
});

describe('the write path', () => {
  it('places an order in one statement, its own transaction, when nothing of its pet is asked for', async () => {
    const petId = await petWithStock(5);
    const place = /* GraphQL */ `
      mutation Place($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id petId quantity complete } }
    `;
    gateway.statements.length = 0;
    const response = await gateway.graphql(place, { petId: petId.toString() });
    expect(response.errors).toBeUndefined();
    // Prisma's query log would show a transaction's COMMIT: there is none.
    expect(gateway.statements).toEqual([expect.stringMatching(/^\s*SELECT \* FROM place_order\(/)]);
  });

  it('reads the pet it is asked for in the same transaction as the order: the write, the read, COMMIT', async () => {
    const petId = await petWithStock(5);
    gateway.statements.length = 0;
    const placed = await order(petId.toString(), 2);
    expect(placed.pet).toEqual({ id: petId.toString(), status: 'AVAILABLE', inventory: { quantity: 3, status: 'AVAILABLE' } });
    // Prisma's query log shows the transaction's COMMIT but not its BEGIN.
    // Four with BEGIN, where taking the locks and writing one by one took seven or eight.
    expect(gateway.statements.map((sql) => sql.trim())).toEqual([
      expect.stringMatching(/^SELECT \* FROM place_order\(/),
      expect.stringMatching(/^SELECT .* FROM "public"."orders"/),
      'COMMIT',
    ]);
  });
});
