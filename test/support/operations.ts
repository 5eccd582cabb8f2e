import { randomBytes, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { deleteKeysUnder } from '../../harness/redis-keys.js';
import { createPrismaClient, type PrismaClient } from '../../src/database/client.js';
import { createEmptyDatabase, createMigratedDatabase, dropDatabase } from './database.js';
import { startGateway } from './processes.js';
import { TEST_JWT_SECRET } from './tokens.js';

/**
 * For tests of the real server process (`tsx src/main.ts`): databases it can
 * use, and a way to start it with everything a test needs (it verifies the
 * tokens of ./tokens.ts), all cleaned up by `cleanUp()` in afterAll.
 */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Unique per test run: the processes of one test hear each other through Redis, and no one else.
 * What they leave under it in Redis goes in `cleanUp()`.
 */
export function channelPrefix() {
  const prefix = `test:${randomUUID()}:`;
  prefixes.push(prefix);
  return prefix;
}

const prefixes: string[] = [];
const databases: string[] = [];
const clients: PrismaClient[] = [];

/** A database migrated to the latest schema (copied from the template), with a Prisma client on it. */
export async function migratedDatabase() {
  const database = await createMigratedDatabase(inject('templateDatabase'));
  databases.push(database.name);
  const prisma = createPrismaClient({ url: database.url, poolSize: 2 });
  clients.push(prisma);
  return { ...database, prisma };
}

/** A database with no tables: no migration applied. */
export async function emptyDatabase() {
  const database = await createEmptyDatabase();
  databases.push(database.name);
  return database;
}

/** Forgets a database the test dropped itself. */
export function forgetDatabase(name: string) {
  databases.splice(databases.indexOf(name), 1);
}

/** Starts the real gateway on `databaseUrl` with the test secret, a free port and quiet logs unless told. */
export function startProcess(databaseUrl: string, settings: Record<string, string | undefined> = {}) {
  return startGateway({
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'warn',
    // With REDIS_URL the rate-limit counters live in Redis, shared with whatever else uses it
    // (other test files, other checkouts): a prefix of its own keeps this process's apart.
    RATE_LIMIT_KEY_PREFIX: `test-rate:${randomUUID()}`,
    ...settings,
  });
}

/** Drops the databases, disconnects the clients and deletes the Redis keys of the prefixes made here. */
export async function cleanUp() {
  await Promise.all(clients.splice(0).map((client) => client.$disconnect()));
  await Promise.all(databases.splice(0).map((name) => dropDatabase(name)));
  await Promise.all(prefixes.splice(0).map((prefix) => deleteKeysUnder(REDIS_URL, prefix)));
}

/**
 * A category with more pets than a first page holds (101, `Pet 000` to `Pet 100`) and one more, `far` (`Pet 500`):
 * renamed to the end of the category, it lands past every first page's rows. Written straight to the database.
 */
export async function crowdedCategory(prisma: PrismaClient) {
  const category = await prisma.category.create({ data: { name: `crowded-${randomBytes(4).toString('hex')}` } });
  await prisma.pet.createMany({ data: Array.from({ length: 101 }, (_, i) => ({ name: `Pet ${String(i).padStart(3, '0')}`, categoryId: category.id })) });
  const far = await prisma.pet.create({ data: { name: 'Pet 500', categoryId: category.id } });
  return { category, far };
}

/** A category with pets in stock (`null`: no inventory entry), written straight to the database. */
export async function arrangePets(prisma: PrismaClient, ...quantities: Array<number | null>) {
  const category = await prisma.category.create({ data: { name: `ops-${randomBytes(4).toString('hex')}` } });
  const pets: Array<{ id: string; name: string }> = [];
  for (const quantity of quantities) {
    const pet = await prisma.pet.create({
      data: { name: `pet-${randomBytes(4).toString('hex')}`, categoryId: category.id },
    });
    if (quantity !== null) {
      await prisma.inventoryItem.create({ data: { petId: pet.id, quantity, status: 'available' } });
    }
    pets.push({ id: pet.id.toString(), name: pet.name });
  }
  return { category: { id: category.id.toString(), name: category.name }, pets };
}
