import { beforeAll, describe, expect, it } from 'vitest';
import {
  CancelOrderDocument,
  CompleteOrderDocument,
  CreatePetDocument,
  InventoryItemDocument,
  InventorySummaryDocument,
  OrderByIdDocument,
  PetByIdDocument,
  type PetStatus,
  PlaceOrderDocument,
  UpdateInventoryDocument,
  UpdatePetDocument,
} from '../../generated/graphql.js';
import { clientFor, expectError } from '../../support/client.js';
import { useTestGateway } from '../../support/gateway.js';

/**
 * The state machine of stock and orders, driven only through the API: an
 * entry is AVAILABLE while it has stock; at zero it is PENDING while the pet
 * has an open order, else SOLD. A pet with an entry carries its status.
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = '';
beforeAll(async () => {
  categoryId = (await gateway.prisma.category.create({ data: { name: 'Dogs' } })).id.toString();
});

async function newPet(status?: PetStatus) {
  const { createPet } = await client.ok(CreatePetDocument, { input: { name: 'Rex', categoryId, status } });
  return createPet.id;
}

async function setStock(petId: string, quantity: number) {
  return (await client.ok(UpdateInventoryDocument, { petId, input: { quantity } })).updateInventory;
}

async function order(petId: string, quantity: number, shipDate?: string) {
  return (await client.ok(PlaceOrderDocument, { input: { petId, quantity, shipDate } })).placeOrder;
}

/** What a client reads back about the pet: its status, and its entry's stock and status. */
async function state(petId: string) {
  const { pet } = await client.ok(PetByIdDocument, { id: petId });
  return { status: pet!.status, inventory: pet!.inventory };
}

/** The same, straight from the database, so a wrong answer cannot hide a wrong write. */
async function stored(petId: string) {
  const id = BigInt(petId);
  const pet = await gateway.prisma.pet.findUniqueOrThrow({ where: { id }, include: { inventory: true } });
  const orders = await gateway.prisma.order.findMany({ where: { petId: id }, orderBy: { id: 'asc' } });
  return {
    status: pet.status,
    stock: pet.inventory?.quantity ?? null,
    entryStatus: pet.inventory?.status ?? null,
    orders: orders.map((row) => ({ quantity: row.quantity, complete: row.complete })),
  };
}

describe('updateInventory', () => {
  it('creates the entry when the pet has none; with stock it is AVAILABLE and so is the pet', async () => {
    const petId = await newPet('SOLD');
    expect(await client.send(InventoryItemDocument, { petId })).toEqual({ data: { inventoryItem: null } });
    expect(await setStock(petId, 3)).toEqual({
      petId,
      quantity: 3,
      status: 'AVAILABLE',
      pet: { id: petId, status: 'AVAILABLE' },
    });
    expect(await stored(petId)).toEqual({ status: 'available', stock: 3, entryStatus: 'available', orders: [] });
  });

  it('creates an entry at zero as SOLD', async () => {
    const petId = await newPet();
    expect(await setStock(petId, 0)).toMatchObject({ quantity: 0, status: 'SOLD', pet: { status: 'SOLD' } });
  });

  it('moves AVAILABLE → SOLD at zero with no open order, and back to AVAILABLE with stock', async () => {
    const petId = await newPet();
    await setStock(petId, 4);
    expect(await setStock(petId, 0)).toMatchObject({ quantity: 0, status: 'SOLD', pet: { status: 'SOLD' } });
    expect(await setStock(petId, 2)).toMatchObject({ quantity: 2, status: 'AVAILABLE', pet: { status: 'AVAILABLE' } });
    expect(await stored(petId)).toMatchObject({ status: 'available', stock: 2, entryStatus: 'available' });
  });

  it('moves to PENDING at zero while an order is open', async () => {
    const petId = await newPet();
    await setStock(petId, 5);
    await order(petId, 1);
    expect(await setStock(petId, 0)).toMatchObject({ quantity: 0, status: 'PENDING', pet: { status: 'PENDING' } });
    expect(await stored(petId)).toMatchObject({ status: 'pending', stock: 0, entryStatus: 'pending' });
  });

  it('answers NOT_FOUND for a pet that does not exist, and creates no entry', async () => {
    expectError(
      await client.send(UpdateInventoryDocument, { petId: '424242', input: { quantity: 1 } }),
      'NOT_FOUND',
    );
    expect(await gateway.prisma.inventoryItem.count({ where: { petId: 424242n } })).toBe(0);
  });
});

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

describe('a pet without an inventory entry', () => {
  it('keeps the status it was given, and may be given another', async () => {
    const petId = await newPet('PENDING');
    expect(await state(petId)).toEqual({ status: 'PENDING', inventory: null });
    const { updatePet } = await client.ok(UpdatePetDocument, { id: petId, input: { status: 'SOLD' } });
    expect(updatePet.status).toBe('SOLD');
    expect(await stored(petId)).toEqual({ status: 'sold', stock: null, entryStatus: null, orders: [] });
  });

  it('carries its entry status once it has one, and can no longer be given a status', async () => {
    const petId = await newPet('PENDING');
    await setStock(petId, 2);
    expect(await state(petId)).toEqual({ status: 'AVAILABLE', inventory: { quantity: 2, status: 'AVAILABLE' } });
    expectError(await client.send(UpdatePetDocument, { id: petId, input: { status: 'SOLD' } }), 'CONFLICT');
    expect(await stored(petId)).toMatchObject({ status: 'available', entryStatus: 'available' });
  });
});

describe('inventorySummary', () => {
  it('follows the stock as it changes', async () => {
    const totals = async () =>
      Object.fromEntries(
        (await client.ok(InventorySummaryDocument)).inventorySummary.map((row) => [
          row.status,
          [row.entries, row.quantity],
        ]),
      );
    const start = await totals();
    const petId = await newPet();
    await setStock(petId, 4);
    const [entries, quantity] = start.AVAILABLE!;
    expect((await totals()).AVAILABLE).toEqual([entries! + 1, quantity! + 4]);
    const placed = await order(petId, 4);
    const afterOrder = await totals();
    expect(afterOrder.AVAILABLE).toEqual([entries, quantity]);
    expect(afterOrder.PENDING).toEqual([start.PENDING![0]! + 1, 0]);
    await client.ok(CompleteOrderDocument, { id: placed.id });
    const afterCompletion = await totals();
    expect(afterCompletion.PENDING).toEqual(start.PENDING);
    expect(afterCompletion.SOLD).toEqual([start.SOLD![0]! + 1, 0]);
  });
});
