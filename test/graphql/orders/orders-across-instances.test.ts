import { beforeAll, describe, expect, inject, it } from 'vitest';
import { codesOf, expectedStatus } from '../../support/client.js';
import { useTestGateway } from '../../support/gateway.js';
import type { GraphQLAnswer } from '../../support/http.js';

/**
 * Two gateway instances on one database, as behind a load balancer: 100
 * orders placed at once, half on each, never take more than the stock. Half
 * ask only for the order (placed by one statement, its own transaction), half
 * for the stock it left too (the same statement and the read in a
 * transaction), so both ways of placing an order contend for the same pet.
 *
 * Not with TEST_ON_EMBEDDED=1: the embedded database belongs to the one
 * process that opened it (src/database/embedded.ts locks its folder), so two
 * instances never share one; place-order.test.ts runs its concurrent orders there.
 */
const first = useTestGateway();
const second = useTestGateway({ sameDatabaseAs: first });

let categoryId = 0n;
beforeAll(async () => {
  categoryId = (await first.prisma.category.create({ data: { name: 'Dogs' } })).id;
});

const orderOnly = /* GraphQL */ `
  mutation Place($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id quantity } }
`;
const orderAndStock = /* GraphQL */ `
  mutation PlaceAndRead($petId: ID!) {
    placeOrder(input: { petId: $petId, quantity: 1 }) { id quantity pet { status inventory { quantity } } }
  }
`;

interface Placed {
  placeOrder: { id: string; quantity: number; pet?: { status: string; inventory: { quantity: number } } } | null;
}

describe.skipIf(Boolean(inject('embeddedTemplate')))('orders placed at once on two instances', () => {
  it('100 orders of 1 for a stock of 60: exactly 60 are placed, 40 refused with INSUFFICIENT_STOCK', async () => {
    const pet = await first.prisma.pet.create({ data: { name: 'Rex', categoryId } });
    const petId = pet.id.toString();
    const stocked = await first.graphql(
      'mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 60 }) { quantity } }',
      { petId },
    );
    expect(stocked.errors).toBeUndefined();

    const answers: GraphQLAnswer<Placed>[] = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        (index % 2 === 0 ? first : second).graphql<Placed>(index % 4 < 2 ? orderOnly : orderAndStock, { petId }),
      ),
    );

    expect(codesOf(answers).sort()).toEqual([...Array(40).fill('INSUFFICIENT_STOCK'), ...Array(60).fill('OK')]);
    const placed = answers.filter((answer) => !answer.errors);
    const refused = answers.filter((answer) => answer.errors);
    for (const answer of refused) {
      expect(answer.data?.placeOrder ?? null).toBeNull();
      expect(answer.errors).toEqual([
        expect.objectContaining({
          message: `Pet ${petId} is out of stock.`,
          extensions: { code: 'INSUFFICIENT_STOCK', status: expectedStatus.INSUFFICIENT_STOCK },
        }),
      ]);
    }
    // Each placed order is its own, and each that read the stock saw a different count: the one it left.
    const orderIds = placed.map((answer) => answer.data!.placeOrder!.id);
    expect(new Set(orderIds).size).toBe(60);
    const left = placed.flatMap((answer) => answer.data!.placeOrder!.pet?.inventory.quantity ?? []);
    expect(new Set(left).size).toBe(left.length);
    expect(left.every((quantity) => quantity >= 0 && quantity < 60)).toBe(true);

    // What was written: those 60 orders, no stock left, the entry and the pet PENDING.
    const orders = await first.prisma.order.findMany({ where: { petId: pet.id } });
    expect(orders.map((row) => row.id.toString()).sort()).toEqual([...orderIds].sort());
    expect(orders.every((row) => row.quantity === 1 && !row.complete)).toBe(true);
    expect(await first.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: pet.id } })).toMatchObject({
      quantity: 0,
      status: 'pending',
    });
    expect((await first.prisma.pet.findUniqueOrThrow({ where: { id: pet.id } })).status).toBe('pending');
  });
});
