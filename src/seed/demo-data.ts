import type { PrismaClient } from '../database/client.js';
import { stockStatus } from '../domain/stock-status.js';

/** The demo catalogue: a few categories, about twenty pets in every status, their stock and orders. */
const categories = [
  { name: 'Dogs', description: 'Loyal companions of every size.' },
  { name: 'Cats', description: 'Independent, curious and quiet.' },
  { name: 'Rabbits', description: 'Gentle grazers for calm homes.' },
  { name: 'Birds', description: 'Songbirds and talkers.' },
];

interface DemoPet {
  name: string;
  category: string;
  stock: number;
  openOrders?: number[];
  completeOrders?: number[];
}

const pets: DemoPet[] = [
  { name: 'Rex', category: 'Dogs', stock: 3, completeOrders: [1] },
  { name: 'Bella', category: 'Dogs', stock: 5 },
  { name: 'Max', category: 'Dogs', stock: 0, openOrders: [1] },
  { name: 'Luna', category: 'Dogs', stock: 0, completeOrders: [2] },
  { name: 'Charlie', category: 'Dogs', stock: 2, openOrders: [1] },
  { name: 'Milo', category: 'Cats', stock: 4 },
  { name: 'Nala', category: 'Cats', stock: 1, completeOrders: [1] },
  { name: 'Simba', category: 'Cats', stock: 0, openOrders: [2] },
  { name: 'Cleo', category: 'Cats', stock: 0, completeOrders: [1] },
  { name: 'Oliver', category: 'Cats', stock: 6, openOrders: [2] },
  { name: 'Thumper', category: 'Rabbits', stock: 8 },
  { name: 'Clover', category: 'Rabbits', stock: 0, openOrders: [3] },
  { name: 'Hazel', category: 'Rabbits', stock: 2 },
  { name: 'Bun Bun', category: 'Rabbits', stock: 0, completeOrders: [4] },
  { name: 'Coco', category: 'Rabbits', stock: 1, completeOrders: [2] },
  { name: 'Kiwi', category: 'Birds', stock: 10 },
  { name: 'Polly', category: 'Birds', stock: 0, openOrders: [1], completeOrders: [1] },
  { name: 'Sunny', category: 'Birds', stock: 3, openOrders: [1] },
  { name: 'Blue', category: 'Birds', stock: 0, completeOrders: [3] },
  { name: 'Pico', category: 'Birds', stock: 7 },
];

// Some sixty statements in one interactive transaction: Prisma's default limit
// (5 s) is too tight for the embedded database on a busy machine.
const seedTransactionLimits = { maxWait: 10_000, timeout: 60_000 };

export interface SeedResult {
  categoriesCreated: number;
  petsCreated: number;
}

/**
 * Loads the demo data. Idempotent: categories are matched by their unique
 * name and pets by name within their category, so a second run creates
 * nothing and changes nothing already there. One transaction: a failed
 * seed leaves no partial catalogue.
 */
export async function seedDemoData(prisma: PrismaClient): Promise<SeedResult> {
  return prisma.$transaction(async (tx) => {
    let categoriesCreated = 0;
    let petsCreated = 0;
    const categoryIds = new Map<string, bigint>();
    for (const category of categories) {
      const existing = await tx.category.findUnique({ where: { name: category.name } });
      const row = existing ?? (await tx.category.create({ data: category }));
      if (!existing) categoriesCreated++;
      categoryIds.set(category.name, row.id);
    }
    for (const pet of pets) {
      const categoryId = categoryIds.get(pet.category) as bigint;
      if (await tx.pet.findFirst({ where: { name: pet.name, categoryId } })) continue;
      const openOrders = pet.openOrders ?? [];
      const status = stockStatus(pet.stock, openOrders.length > 0);
      await tx.pet.create({
        data: {
          name: pet.name,
          categoryId,
          status,
          inventory: { create: { quantity: pet.stock, status } },
          orders: {
            create: [
              ...openOrders.map((quantity) => ({ quantity, complete: false, shipDate: null })),
              ...(pet.completeOrders ?? []).map((quantity) => ({
                quantity,
                complete: true,
                shipDate: new Date('2026-10-01T12:00:00Z'),
              })),
            ],
          },
        },
      });
      petsCreated++;
    }
    return { categoriesCreated, petsCreated };
  }, seedTransactionLimits);
}
