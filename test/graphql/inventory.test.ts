import { beforeAll, describe, expect, it } from 'vitest';
import {
  CompleteOrderDocument,
  InventoryItemDocument,
  InventorySummaryDocument,
  UpdateInventoryDocument,
  UpdatePetDocument,
} from '../generated/graphql.js';
import { stockSteps } from '../support/stock.js';
import { clientFor, codesOf, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * The state machine of stock, driven only through the API: an entry is
 * AVAILABLE while it has stock; at zero it is PENDING while the pet has an
 * open order, else SOLD. A pet with an entry carries its status. (What orders
 * do to the stock: orders/.)
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = '';
beforeAll(async () => {
  categoryId = (await gateway.prisma.category.create({ data: { name: 'Dogs' } })).id.toString();
});

const { newPet, setStock, order, state, stored } = stockSteps(gateway, client, () => categoryId);

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

describe('stock updates at the same time', () => {
  it('concurrent stock updates creating the same entry do not collide', async () => {
    for (let round = 0; round < 5; round++) {
      const pet = await gateway.prisma.pet.create({ data: { name: 'Fresh', categoryId: BigInt(categoryId) } });
      const responses = await Promise.all(
        [3, 7].map((quantity) =>
          client.send(UpdateInventoryDocument, { petId: pet.id.toString(), input: { quantity } }),
        ),
      );
      expect(codesOf(responses)).toEqual(['OK', 'OK']);
      const entry = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: pet.id } });
      expect([3, 7]).toContain(entry.quantity);
      expect(entry.status).toBe('available');
    }
  });
});
