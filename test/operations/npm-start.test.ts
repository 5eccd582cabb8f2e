import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase, dropDatabase } from '../support/database.js';
import { freePort, npmRun, run, startGateway, stopAll } from '../support/processes.js';
import { postGraphQL, type GraphQLAnswer } from '../support/http.js';

/**
 * The real server process, started as `npm start` starts it
 * (`tsx src/main.ts`), queried over HTTP, stopped with SIGTERM.
 */

const folders: string[] = [];
const databases: string[] = [];

afterAll(async () => {
  stopAll();
  await Promise.all(databases.map((name) => dropDatabase(name)));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

const petsQuery = /* GraphQL */ `
  {
    pets(first: 100) {
      totalCount
      edges { node { id name status category { name } } }
    }
    categories { totalCount }
  }
`;

interface PetsAnswer {
  pets: {
    totalCount: number;
    edges: Array<{ node: { id: string; name: string; status: string; category: { name: string } } }>;
  };
  categories: { totalCount: number };
}

// What the issue allows for a start on the embedded default.
const STARTUP_LIMIT_MS = 30_000;

describe('npm start on the embedded default (no DATABASE_URL)', () => {
  it('creates, migrates and seeds the database on first start, serves GraphQL, stops on SIGTERM, and keeps its data', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-smoke-'));
    folders.push(dataDir);
    const port = await freePort();

    // First start: a fresh data folder.
    const cold = await startGateway({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    console.log(`embedded start-up, cold (new data folder): ${cold.startupMs} ms`);
    expect(cold.url).toBe(`http://127.0.0.1:${port}/graphql`);
    expect(cold.startupMs).toBeLessThan(STARTUP_LIMIT_MS);
    expect(existsSync(path.join(dataDir, 'pglite'))).toBe(true);
    expect(cold.output()).toContain('"firstStart":true');
    expect(cold.output()).toContain('demo data loaded');

    const typename = await postGraphQL(cold.baseUrl, { query: '{ __typename }' });
    expect(typename.status).toBe(200);
    expect(typename.body).toEqual({ data: { __typename: 'Query' } });

    const seeded = await postGraphQL<GraphQLAnswer<PetsAnswer>>(cold.baseUrl, { query: petsQuery });
    expect(seeded.status).toBe(200);
    expect(seeded.body.errors).toBeUndefined();
    const pets = seeded.body.data?.pets;
    expect(pets?.totalCount).toBe(20);
    expect(pets?.edges).toHaveLength(20);
    expect(seeded.body.data?.categories.totalCount).toBe(4);
    expect(new Set(pets?.edges.map((edge) => edge.node.status))).toEqual(new Set(['AVAILABLE', 'PENDING', 'SOLD']));
    expect(pets?.edges.map((edge) => edge.node.name)).toContain('Rex');

    // Writes need a token: anonymous is refused, and `npm run token` mints one for this data folder's key.
    const createFish =
      'mutation { createCategory(input: { name: "Fish", description: "Written before the restart." }) { name } }';
    const anonymous = await postGraphQL(cold.baseUrl, { query: createFish });
    expect(anonymous.body.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED', status: 401 } });
    // As the README shows it, TOKEN=$(npm run -s token -- …): the output is the token and nothing else.
    const minted = await run('npm', ['run', '-s', 'token', '--', '--scope', 'catalog:write'], { DATA_DIR: dataDir });
    expect(minted.code, minted.stderr).toBe(0);
    const token = minted.stdout.replace(/\n$/, '');
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    // A write made now must survive the restart.
    const created = await postGraphQL<GraphQLAnswer<{ createCategory: { name: string } }>>(cold.baseUrl, { query: createFish }, {
      authorization: `Bearer ${token}`,
    });
    expect(created.body).toEqual({ data: { createCategory: { name: 'Fish' } } });

    const stopped = await cold.stop('SIGTERM');
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(cold.output()).toContain('shutting down');

    // Second start on the same folder: no new database, no second seed.
    const warm = await startGateway({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    console.log(`embedded start-up, warm (existing data folder): ${warm.startupMs} ms`);
    expect(warm.startupMs).toBeLessThan(STARTUP_LIMIT_MS);
    expect(warm.output()).toContain('"firstStart":false');
    expect(warm.output()).not.toContain('demo data loaded');
    expect(warm.output()).toContain('database schema is current');

    const again = await postGraphQL<GraphQLAnswer<PetsAnswer>>(warm.baseUrl, { query: petsQuery });
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data?.pets.totalCount).toBe(20);
    expect(again.body.data?.categories.totalCount).toBe(5);
    expect(again.body.data?.pets.edges.map((edge) => edge.node.id)).toEqual(pets?.edges.map((edge) => edge.node.id));

    expect(await warm.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });
});

describe('npm start after npm run db:migrate on a new DATA_DIR', () => {
  it('still loads the demo data on its first start, and only then', { timeout: 180_000 }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-smoke-migrated-'));
    folders.push(dataDir);
    const migrated = await npmRun('db:migrate', [], { DATA_DIR: dataDir });
    expect(migrated.code, migrated.stderr).toBe(0);

    const first = await startGateway({ DATA_DIR: dataDir, PORT: '0' });
    expect(first.output()).toContain('"firstStart":false');
    expect(first.output()).toContain('demo data loaded');
    const answer = await postGraphQL<GraphQLAnswer<PetsAnswer>>(first.baseUrl, { query: petsQuery });
    expect(answer.body.data?.pets.totalCount).toBe(20);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await startGateway({ DATA_DIR: dataDir, PORT: '0' });
    expect(second.output()).not.toContain('demo data loaded');
    expect((await postGraphQL<GraphQLAnswer<PetsAnswer>>(second.baseUrl, { query: petsQuery })).body.data?.pets.totalCount).toBe(20);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('npm start with DATABASE_URL', () => {
  async function tables(url: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
      );
      return rows.map((row) => row.name);
    } finally {
      await client.end();
    }
  }

  it('leaves migrations to db:migrate by default, and migrates (without seeding) with MIGRATE_ON_START=true', {
    timeout: 120_000,
  }, async () => {
    const database = await createEmptyDatabase();
    databases.push(database.name);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-smoke-url-'));
    folders.push(dataDir);

    // Not asked to migrate: serves, but touches nothing, and starts no embedded database.
    const untouched = await startGateway({ DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: '0' });
    expect((await postGraphQL(untouched.baseUrl, { query: '{ __typename }' })).body).toEqual({ data: { __typename: 'Query' } });
    expect(await untouched.stop()).toEqual({ code: 0, signal: null });
    expect(await tables(database.url)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'pglite'))).toBe(false);

    const port = await freePort();
    const migrating = await startGateway({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: String(port),
      MIGRATE_ON_START: 'true',
    });
    expect(migrating.url).toBe(`http://127.0.0.1:${port}/graphql`);
    expect(migrating.output()).toContain('migrations applied');
    expect(await tables(database.url)).toEqual([
      '_prisma_migrations',
      'categories',
      'inventory_items',
      'orders',
      'pets',
      'row_counts',
    ]);

    const answer = await postGraphQL<GraphQLAnswer<PetsAnswer>>(migrating.baseUrl, { query: petsQuery });
    expect(answer.body.errors).toBeUndefined();
    // Migrated, not seeded: a real server's data is not ours to invent.
    expect(answer.body.data).toEqual({ pets: { totalCount: 0, edges: [] }, categories: { totalCount: 0 } });
    expect(existsSync(path.join(dataDir, 'pglite'))).toBe(false);

    expect(await migrating.stop()).toEqual({ code: 0, signal: null });
  });
});
