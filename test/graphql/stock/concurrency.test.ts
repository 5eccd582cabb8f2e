import { beforeAll, describe, expect, it } from 'vitest';
import {
  CancelOrderDocument,
  CompleteOrderDocument,
  CreatePetDocument,
  DeleteCategoryDocument,
  DeletePetDocument,
  PlaceOrderDocument,
  UpdateInventoryDocument,
} from '../../generated/graphql.js';
import { clientFor, expectedStatus } from '../../support/client.js';
import { useTestGateway } from '../../support/gateway.js';

/** Orders placed at the same instant, against PostgreSQL's row locks. */
const gateway = useTestGateway();
const client = clientFor(gateway);

let categoryId = 0n;
beforeAll(async () => {
  categoryId = (await gateway.prisma.category.create({ data: { name: 'Dogs' } })).id;
});

async function petWithStock(quantity: number) {
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId } });
  await client.ok(UpdateInventoryDocument, { petId: pet.id.toString(), input: { quantity } });
  return pet.id;
}

const codesOf = (responses: Array<{ errors?: Array<{ extensions?: Record<string, unknown> }> }>) =>
  responses.map((response) => (response.errors ? String(response.errors[0]?.extensions?.code) : 'OK'));

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

  it('a pet added while its category is deleted either wins (the delete is refused) or finds no category', async () => {
    for (let round = 0; round < 10; round++) {
      const category = (await gateway.prisma.category.create({ data: { name: `Kind ${round}` } })).id.toString();
      const [created, deleted] = await Promise.all([
        client.send(CreatePetDocument, { input: { name: 'Newcomer', categoryId: category } }),
        client.send(DeleteCategoryDocument, { id: category }),
      ]);
      const outcome = codesOf([created, deleted]).join(' ');
      expect(['OK CONFLICT', 'NOT_FOUND OK']).toContain(outcome);
      const left = await gateway.prisma.category.count({ where: { id: BigInt(category) } });
      const pets = await gateway.prisma.pet.count({ where: { categoryId: BigInt(category) } });
      expect({ outcome, left, pets }).toEqual(
        outcome === 'OK CONFLICT' ? { outcome, left: 1, pets: 1 } : { outcome, left: 0, pets: 0 },
      );
    }
  });

  it('concurrent stock updates creating the same entry do not collide', async () => {
    for (let round = 0; round < 5; round++) {
      const pet = await gateway.prisma.pet.create({ data: { name: 'Fresh', categoryId } });
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
