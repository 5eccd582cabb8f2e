import { beforeAll, describe, expect, it } from 'vitest';
import {
  CancelOrderDocument,
  CompleteOrderDocument,
  OrderByIdDocument,
  PlaceOrderDocument,
  UpdateInventoryDocument,
} from '../../generated/graphql.js';
import { stockSteps } from '../../support/stock.js';
import { clientFor, expectError } from '../../support/client.js';
import { useTestGateway } from '../../support/gateway.js';

/**
 * completeOrder and cancelOrder, driven only through the API: completing
 * ships the order and, once no order of the pet is open, turns a PENDING pet
 * SOLD; cancelling gives the quantity back to stock. Both refuse an order
 * that is complete, and both keep stock and status consistent when they run
 * at the same time. (Placing orders: place-order.test.ts.)
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = '';
beforeAll(async () => {
  categoryId = (await gateway.prisma.category.create({ data: { name: 'Dogs' } })).id.toString();
});

const { newPet, setStock, order, state, stored } = stockSteps(gateway, client, () => categoryId);

/** A pet added straight to the database, then given `quantity` in stock through the API; its id. */
async function petWithStock(quantity: number) {
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: BigInt(categoryId) } });
  await client.ok(UpdateInventoryDocument, { petId: pet.id.toString(), input: { quantity } });
  return pet.id;
}

describe('completeOrder', () => {
  it('marks the order complete with a ship date of now; PENDING → SOLD when no order is left open', async () => {
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1);
    const before = Date.now();
    const { completeOrder } = await client.ok(CompleteOrderDocument, { id: placed.id });
    const after = Date.now();
    expect(completeOrder).toMatchObject({
      id: placed.id,
      petId,
      quantity: 1,
      complete: true,
      pet: { status: 'SOLD', inventory: { quantity: 0, status: 'SOLD' } },
    });
    const shipped = Date.parse(completeOrder.shipDate!);
    expect(shipped).toBeGreaterThanOrEqual(before - 1000);
    expect(shipped).toBeLessThanOrEqual(after + 1000);
    expect(await stored(petId)).toEqual({
      status: 'sold',
      stock: 0,
      entryStatus: 'sold',
      orders: [{ quantity: 1, complete: true }],
    });
  });

  it('keeps a ship date the order already had', async () => {
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1, '2027-01-01T00:00:00.000Z');
    const { completeOrder } = await client.ok(CompleteOrderDocument, { id: placed.id });
    expect(completeOrder.shipDate).toBe('2027-01-01T00:00:00.000Z');
  });

  it('leaves the pet AVAILABLE while stock is left', async () => {
    const petId = await newPet();
    await setStock(petId, 3);
    const placed = await order(petId, 1);
    const { completeOrder } = await client.ok(CompleteOrderDocument, { id: placed.id });
    expect(completeOrder.pet).toMatchObject({ status: 'AVAILABLE', inventory: { quantity: 2, status: 'AVAILABLE' } });
  });

  it('stays PENDING while another order is still open', async () => {
    const petId = await newPet();
    await setStock(petId, 2);
    const first = await order(petId, 1);
    const second = await order(petId, 1);
    const { completeOrder } = await client.ok(CompleteOrderDocument, { id: first.id });
    expect(completeOrder.pet).toMatchObject({ status: 'PENDING', inventory: { quantity: 0, status: 'PENDING' } });
    const done = await client.ok(CompleteOrderDocument, { id: second.id });
    expect(done.completeOrder.pet).toMatchObject({ status: 'SOLD', inventory: { quantity: 0, status: 'SOLD' } });
  });

  it('refuses an order that is already complete with CONFLICT, and changes nothing', async () => {
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1, '2027-01-01T00:00:00.000Z');
    await client.ok(CompleteOrderDocument, { id: placed.id });
    const error = expectError(await client.send(CompleteOrderDocument, { id: placed.id }), 'CONFLICT');
    expect(error.message).toContain('already complete');
    const row = await gateway.prisma.order.findUniqueOrThrow({ where: { id: BigInt(placed.id) } });
    expect(row).toMatchObject({ complete: true, shipDate: new Date('2027-01-01T00:00:00.000Z') });
  });

  it('answers NOT_FOUND for an order that does not exist', async () => {
    expectError(await client.send(CompleteOrderDocument, { id: '424242' }), 'NOT_FOUND');
  });
});

describe('cancelOrder', () => {
  it('returns the quantity to stock: PENDING → AVAILABLE, and the order is gone', async () => {
    const petId = await newPet();
    await setStock(petId, 3);
    const placed = await order(petId, 3);
    expect((await state(petId)).status).toBe('PENDING');
    const { cancelOrder } = await client.ok(CancelOrderDocument, { id: placed.id });
    expect(cancelOrder).toEqual({
      id: placed.id,
      petId,
      quantity: 3,
      complete: false,
      pet: { id: petId, status: 'AVAILABLE', inventory: { quantity: 3, status: 'AVAILABLE' } },
    });
    expect(await client.send(OrderByIdDocument, { id: placed.id })).toEqual({ data: { order: null } });
    expect(await stored(petId)).toEqual({ status: 'available', stock: 3, entryStatus: 'available', orders: [] });
  });

  it('adds to what is left in stock', async () => {
    const petId = await newPet();
    await setStock(petId, 5);
    const placed = await order(petId, 2);
    const { cancelOrder } = await client.ok(CancelOrderDocument, { id: placed.id });
    expect(cancelOrder.pet.inventory).toEqual({ quantity: 5, status: 'AVAILABLE' });
  });

  it('refuses a complete order with CONFLICT, and keeps it and the stock', async () => {
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1);
    await client.ok(CompleteOrderDocument, { id: placed.id });
    const error = expectError(await client.send(CancelOrderDocument, { id: placed.id }), 'CONFLICT');
    expect(error.message).toContain('complete');
    expect(await stored(petId)).toEqual({
      status: 'sold',
      stock: 0,
      entryStatus: 'sold',
      orders: [{ quantity: 1, complete: true }],
    });
  });

  it('answers NOT_FOUND for an order that does not exist, or was cancelled already', async () => {
    expectError(await client.send(CancelOrderDocument, { id: '424242' }), 'NOT_FOUND');
    const petId = await newPet();
    await setStock(petId, 1);
    const placed = await order(petId, 1);
    await client.ok(CancelOrderDocument, { id: placed.id });
    expectError(await client.send(CancelOrderDocument, { id: placed.id }), 'NOT_FOUND');
    expect(await stored(petId)).toMatchObject({ stock: 1, entryStatus: 'available' });
  });
});

describe('completing and cancelling at the same time', () => {
  it('completing and cancelling orders at the same time keeps stock and status consistent', async () => {
    const petId = await petWithStock(6);
    const placed = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.ok(PlaceOrderDocument, { input: { petId: petId.toString(), quantity: 1 } }),
      ),
    );
    const ids = placed.map((data) => data.placeOrder.id);
    await Promise.all(
      ids.map((id, index) =>
        index % 2 === 0 ? client.ok(CompleteOrderDocument, { id }) : client.ok(CancelOrderDocument, { id }),
      ),
    );
    const entry = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId } });
    expect(entry).toMatchObject({ quantity: 3, status: 'available' });
    expect(await gateway.prisma.order.count({ where: { petId } })).toBe(3);
    expect(await gateway.prisma.order.count({ where: { petId, complete: false } })).toBe(0);
  });
});

describe('the write path', () => {
  const complete = 'mutation Complete($id: ID!) { completeOrder(id: $id) { id complete } }';
  const cancel = 'mutation Cancel($id: ID!) { cancelOrder(id: $id) { id quantity } }';

  it('completes or cancels in one statement, its own transaction, when nothing of its pet is asked for', async () => {
    const petId = await petWithStock(4);
    for (const [document, name] of [[complete, 'completeOrder'], [cancel, 'cancelOrder']] as const) {
      const placed = await order(petId.toString(), 1);
      gateway.statements.length = 0;
      const response = await gateway.graphql(document, { id: placed.id });
      expect(response.errors, name).toBeUndefined();
      // Prisma's query log would show a transaction's COMMIT: there is none.
      expect(gateway.statements, name).toEqual([expect.stringMatching(/^\s*SELECT \* FROM close_order\(/)]);
    }
  });

  it('reads the pet it is asked for in the same transaction as the write: the write, the read, COMMIT', async () => {
    const petId = await petWithStock(1);
    const placed = await order(petId.toString(), 1);
    gateway.statements.length = 0;
    const { cancelOrder } = await client.ok(CancelOrderDocument, { id: placed.id });
    // The stock the cancellation gave back, though the order itself is gone.
    expect(cancelOrder.pet).toEqual({ id: petId.toString(), status: 'AVAILABLE', inventory: { quantity: 1, status: 'AVAILABLE' } });
    expect(gateway.statements.map((sql) => sql.trim())).toEqual([
      expect.stringMatching(/^SELECT \* FROM close_order\(/),
      // The pet and its entry in one read.
      expect.stringMatching(/^SELECT .* FROM "public"."pets"/),
      'COMMIT',
    ]);
  });

  it('closes an order once when it is completed and cancelled at the same time: the other is refused, the stock counted once', async () => {
    for (let round = 0; round < 5; round++) {
      const petId = await petWithStock(2);
      const placed = await order(petId.toString(), 2);
      const [completed, cancelled] = await Promise.all([
        gateway.graphql(complete, { id: placed.id }),
        gateway.graphql(cancel, { id: placed.id }),
      ]);
      const entry = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId } });
      if (completed.errors) {
        // The cancellation came first: the order is gone and its two units are back.
        expect(completed.errors[0]?.extensions?.code).toBe('NOT_FOUND');
        expect(cancelled.errors).toBeUndefined();
        expect(entry).toMatchObject({ quantity: 2, status: 'available' });
        expect(await gateway.prisma.order.count({ where: { petId } })).toBe(0);
      } else {
        expect(cancelled.errors?.[0]?.extensions?.code).toBe('CONFLICT');
        expect(entry).toMatchObject({ quantity: 0, status: 'sold' });
        expect(await gateway.prisma.order.count({ where: { petId, complete: true } })).toBe(1);
      }
    }
  });
});
