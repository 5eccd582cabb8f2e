import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMigratedDatabase, dropDatabase } from '../support/database.js';
import { npmRun, stopAll } from '../support/processes.js';

let database: { name: string; url: string };
const folders: string[] = [];

beforeAll(async () => {
  database = await createMigratedDatabase(inject('templateDatabase'));
});

afterAll(async () => {
  stopAll();
  await dropDatabase(database.name);
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** Every row of the demo tables, in a stable order, so a second seed can be shown to change nothing. */
async function contents(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const query = async (sql: string) => (await client.query(sql)).rows;
    return {
      categories: await query('SELECT * FROM categories ORDER BY id'),
      pets: await query('SELECT * FROM pets ORDER BY id'),
      inventory: await query('SELECT * FROM inventory_items ORDER BY pet_id'),
      orders: await query('SELECT * FROM orders ORDER BY id'),
    };
  } finally {
    await client.end();
  }
}

describe('npm run db:seed', () => {
  it('loads the demo catalogue once: a second run adds and changes nothing', { timeout: 120_000 }, async () => {
    const first = await npmRun('db:seed', [], { DATABASE_URL: database.url });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Demo data: 4 categories and 20 pets added.');

    const seeded = await contents(database.url);
    expect(seeded.categories).toHaveLength(4);
    expect(seeded.pets).toHaveLength(20);
    expect(new Set(seeded.pets.map((pet) => pet.status))).toEqual(new Set(['available', 'pending', 'sold']));
    // Every pet has its stock entry, and each carries its entry's status.
    expect(seeded.inventory).toHaveLength(20);
    const stock = new Map(seeded.inventory.map((item) => [String(item.pet_id), item]));
    for (const pet of seeded.pets) {
      const item = stock.get(String(pet.id));
      expect(item?.status, pet.name).toBe(pet.status);
      expect(item?.quantity > 0, pet.name).toBe(pet.status === 'available');
    }
    // Some open and some complete orders; complete ones have shipped.
    const open = seeded.orders.filter((order) => !order.complete);
    const complete = seeded.orders.filter((order) => order.complete);
    expect(open.length).toBeGreaterThan(0);
    expect(complete.length).toBeGreaterThan(0);
    for (const order of complete) expect(order.ship_date).toBeInstanceOf(Date);
    // A pending pet is out of stock with an open order; a sold one is out of stock with none.
    const openPets = new Set(open.map((order) => String(order.pet_id)));
    for (const pet of seeded.pets) {
      if (pet.status === 'pending') expect(openPets.has(String(pet.id)), pet.name).toBe(true);
      if (pet.status === 'sold') expect(openPets.has(String(pet.id)), pet.name).toBe(false);
    }

    const second = await npmRun('db:seed', [], { DATABASE_URL: database.url });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Demo data: 0 categories and 0 pets added.');
    expect(await contents(database.url)).toEqual(seeded);
  });

  it('fails with the setting named when DATABASE_URL is not a PostgreSQL URL', async () => {
    const result = await npmRun('db:seed', [], { DATABASE_URL: 'mysql://localhost/petstore' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('DATABASE_URL must be a PostgreSQL connection URL');
  });

  it('migrates and seeds a fresh embedded database in DATA_DIR', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-seed-'));
    folders.push(dataDir);

    const result = await npmRun('db:seed', [], { DATA_DIR: dataDir });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Demo data: 4 categories and 20 pets added.');
  });
});
