import { CreatePetDocument, PetByIdDocument, type PetStatus, PlaceOrderDocument, UpdateInventoryDocument } from '../generated/graphql.js';
import type { GraphQLClient } from './client.js';
import type { TestGateway } from './gateway.js';

/**
 * The steps the stock and order tests take through the API (new pets, stock,
 * orders), and the two ways they look at the outcome: what a client reads
 * back, and what is stored, so a wrong answer cannot hide a wrong write.
 * `categoryId` is read when a pet is made (the files create it before their tests).
 */
export function stockSteps(gateway: TestGateway, client: GraphQLClient, categoryId: () => string) {
  return {
    async newPet(status?: PetStatus) {
      const { createPet } = await client.ok(CreatePetDocument, { input: { name: 'Rex', categoryId: categoryId(), status } });
      return createPet.id;
    },
    async setStock(petId: string, quantity: number) {
      return (await client.ok(UpdateInventoryDocument, { petId, input: { quantity } })).updateInventory;
    },
    async order(petId: string, quantity: number, shipDate?: string) {
      return (await client.ok(PlaceOrderDocument, { input: { petId, quantity, shipDate } })).placeOrder;
    },
    /** What a client reads back about the pet: its status, and its entry's stock and status. */
    async state(petId: string) {
      const { pet } = await client.ok(PetByIdDocument, { id: petId });
      return { status: pet!.status, inventory: pet!.inventory };
    },
    /** The same, straight from the database. */
    async stored(petId: string) {
      const id = BigInt(petId);
      const pet = await gateway.prisma.pet.findUniqueOrThrow({ where: { id }, include: { inventory: true } });
      const orders = await gateway.prisma.order.findMany({ where: { petId: id }, orderBy: { id: 'asc' } });
      return {
        status: pet.status,
        stock: pet.inventory?.quantity ?? null,
        entryStatus: pet.inventory?.status ?? null,
        orders: orders.map((row) => ({ quantity: row.quantity, complete: row.complete })),
      };
    },
  };
}
