import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPendingMigrations,
  createMigration,
  defaultMigrationPaths,
  type MigrationPaths,
  nextMigrationSql,
} from '../../src/migrations/migrations.js';
import { createEmptyDatabase, dropDatabase } from '../support/database.js';
import { npmRun, projectRoot, stopAll } from '../support/processes.js';

const tables = ['_prisma_migrations', 'categories', 'inventory_items', 'orders', 'pets', 'row_counts'];
const checks = [
  'categories_name_not_blank',
  'inventory_items_quantity_not_negative',
  'orders_quantity_positive',
  'pets_name_not_blank',
];
// One index per lookup the API makes (besides the primary keys).
const indexes = [
  'categories_name_key',
  'inventory_items_status_pet_id_idx',
  'orders_complete_id_idx',
  'orders_pet_id_complete_idx',
  'pets_category_id_id_name_status_idx',
  'pets_category_id_name_id_status_idx',
  'pets_name_id_idx',
  'pets_status_id_idx',
];

const databases: string[] = [];
const folders: string[] = [];

async function freshDatabase() {
  const database = await createEmptyDatabase();
  databases.push(database.name);
  return database;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function tablesOf(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    );
    return rows.map((row) => row.name);
  });
}

/** Everything a migration run could change: tables, columns, constraints, indexes, the migration records. */
async function snapshot(url: string) {
  return withClient(url, async (client) => {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`,
    );
    const constraints = await client.query(
      `SELECT conrelid::regclass::text AS table, conname, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
    );
    const indexRows = await client.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`,
    );
    const migrations = await client.query('SELECT * FROM _prisma_migrations ORDER BY migration_name');
    return {
      columns: columns.rows,
      constraints: constraints.rows,
      indexes: indexRows.rows,
      migrations: migrations.rows,
    };
  });
}

async function migrationFolders(migrationsDir: string): Promise<string[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** A copy of prisma/ in a temporary folder, so schema changes and new migrations never touch the project. */
async function copyOfPrismaFolder(): Promise<MigrationPaths & { root: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'petstore-migrations-'));
  folders.push(root);
  await cp(path.join(projectRoot, 'prisma'), path.join(root, 'prisma'), { recursive: true });
  return {
    root,
    schemaFile: path.join(root, 'prisma/schema.prisma'),
    migrationsDir: path.join(root, 'prisma/migrations'),
  };
}

/** Adds `nickname String?` to the Pet model of the schema at `schemaFile`; returns the new schema text. */
async function addPetNickname(schemaFile: string): Promise<string> {
  const schema = await readFile(schemaFile, 'utf8');
  const changed = schema.replace(/(model Pet \{\n)/, '$1  nickname   String?\n');
  expect(changed).not.toBe(schema);
  await writeFile(schemaFile, changed);
  return changed;
}

let projectMigrations: string[];

beforeAll(async () => {
  projectMigrations = await migrationFolders(defaultMigrationPaths.migrationsDir);
});

afterAll(async () => {
  stopAll();
  await Promise.all(databases.map((name) => dropDatabase(name)));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('applyPendingMigrations', () => {
  it('creates every table, index and CHECK constraint in a fresh database and records the migration', async () => {
    const { url } = await freshDatabase();
    expect(await tablesOf(url)).toEqual([]);

    const applied = await applyPendingMigrations(url);

    expect(projectMigrations.length).toBeGreaterThan(0);
    expect(applied).toEqual(projectMigrations);
    expect(await tablesOf(url)).toEqual(tables);
    const state = await snapshot(url);
    expect(state.constraints.map((row) => row.conname)).toEqual(expect.arrayContaining(checks));
    expect(state.indexes.map((row) => row.indexname)).toEqual(expect.arrayContaining(indexes));

    // Recorded as `prisma migrate deploy` records them: finished, not rolled back, checksum of the file.
    expect(state.migrations).toHaveLength(projectMigrations.length);
    for (const row of state.migrations) {
      const sql = await readFile(path.join(defaultMigrationPaths.migrationsDir, row.migration_name, 'migration.sql'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
      expect(row.logs).toBeNull();
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
    }
  });

  it('leaves CHECK constraints that refuse bad rows from any writer, not only the domain code', async () => {
    const { url } = await freshDatabase();
    await applyPendingMigrations(url);
    await withClient(url, async (client) => {
      await client.query(`INSERT INTO categories (id, name, updated_at) VALUES (1, 'Dogs', now())`);
      await client.query(`INSERT INTO pets (id, name, category_id, updated_at) VALUES (1, 'Rex', 1, now())`);
      const refused = async (sql: string) => {
        const error = await client.query(sql).then(
          () => undefined,
          (e: pg.DatabaseError) => e,
        );
        expect(error, sql).toBeDefined();
        return error;
      };
      const negativeStock = await refused(
        `INSERT INTO inventory_items (pet_id, quantity, status, updated_at) VALUES (1, -1, 'available', now())`,
      );
      expect(negativeStock).toMatchObject({ code: '23514', constraint: 'inventory_items_quantity_not_negative' });
      expect(await refused(`INSERT INTO orders (pet_id, quantity) VALUES (1, 0)`)).toMatchObject({
        code: '23514',
        constraint: 'orders_quantity_positive',
      });
      expect(await refused(`INSERT INTO categories (name, updated_at) VALUES ('   ', now())`)).toMatchObject({
        code: '23514',
        constraint: 'categories_name_not_blank',
      });
      expect(await refused(`INSERT INTO pets (name, category_id, updated_at) VALUES ('', 1, now())`)).toMatchObject({
        code: '23514',
        constraint: 'pets_name_not_blank',
      });
      // A category that still has pets cannot be deleted.
      expect(await refused('DELETE FROM categories WHERE id = 1')).toMatchObject({ code: '23503' });
      // The good rows are accepted.
      await client.query(
        `INSERT INTO inventory_items (pet_id, quantity, status, updated_at) VALUES (1, 0, 'sold', now())`,
      );
      await client.query('INSERT INTO orders (pet_id, quantity) VALUES (1, 1)');
    });
  });

  it('applies nothing and changes nothing the second time', async () => {
    const { url } = await freshDatabase();
    await applyPendingMigrations(url);
    const before = await snapshot(url);

    expect(await applyPendingMigrations(url)).toEqual([]);

    expect(await snapshot(url)).toEqual(before);
  });

  it('applies a failing migration not at all, records the failure, and refuses to go on, as Prisma does', async () => {
    const paths = await copyOfPrismaFolder();
    const broken = path.join(paths.migrationsDir, '29991231235959_broken');
    await mkdir(broken);
    await writeFile(
      path.join(broken, 'migration.sql'),
      'CREATE TABLE "half_done" ("id" INTEGER);\nALTER TABLE "no_such_table" ADD COLUMN "x" INTEGER;\n',
    );
    const { url } = await freshDatabase();

    await expect(applyPendingMigrations(url, paths)).rejects.toThrow(/no_such_table|No such table/);

    // The migrations before it are in; nothing of the broken one is.
    expect(await tablesOf(url)).toEqual(tables);
    const { migrations } = await snapshot(url);
    expect(migrations.map((row) => [row.migration_name, row.finished_at !== null])).toEqual([
      ...projectMigrations.map((name) => [name, true]),
      ['29991231235959_broken', false],
    ]);
    await expect(applyPendingMigrations(url, paths)).rejects.toThrow(/failed migrations/);
  });
});

describe('making the next migration', () => {
  it('finds no change between the project schema and its newest migration', async () => {
    expect(await nextMigrationSql()).toBe('');
    const newest = projectMigrations.at(-1) as string;
    const snapshotFile = path.join(defaultMigrationPaths.migrationsDir, newest, 'schema.prisma');
    expect(await readFile(snapshotFile, 'utf8')).toBe(await readFile(defaultMigrationPaths.schemaFile, 'utf8'));
  });

  it('writes nothing when the schema has not changed', async () => {
    const paths = await copyOfPrismaFolder();
    const before = await readdir(paths.migrationsDir, { recursive: true });

    expect(await nextMigrationSql(paths)).toBe('');
    expect(await createMigration('nothing_changed', paths)).toBeUndefined();

    expect(await readdir(paths.migrationsDir, { recursive: true })).toEqual(before);
  });

  it('writes the SQL Prisma would write for a changed schema, and its snapshot, as the newest folder', async () => {
    const paths = await copyOfPrismaFolder();
    const changed = await addPetNickname(paths.schemaFile);

    // What `prisma migrate dev` writes for a new optional column (its spacing included).
    const expected = '-- AlterTable\nALTER TABLE "pets" ADD COLUMN     "nickname" TEXT;\n';
    expect(await nextMigrationSql(paths)).toBe(expected);

    const now = new Date('2099-01-02T03:04:05.678Z');
    const created = await createMigration('add_pet_nickname', paths, now);

    expect(created).toEqual({ name: '20990102030405_add_pet_nickname', sql: expected });
    expect(await migrationFolders(paths.migrationsDir)).toEqual([...projectMigrations, created?.name]);
    const folder = path.join(paths.migrationsDir, created?.name as string);
    expect(await readFile(path.join(folder, 'migration.sql'), 'utf8')).toBe(expected);
    expect(await readFile(path.join(folder, 'schema.prisma'), 'utf8')).toBe(changed);

    // The next diff starts from the new snapshot: nothing more to write.
    expect(await nextMigrationSql(paths)).toBe('');
    expect(await createMigration('again', paths)).toBeUndefined();

    // And the new folder applies after the existing ones.
    const { url } = await freshDatabase();
    expect(await applyPendingMigrations(url, paths)).toEqual([...projectMigrations, created?.name]);
    const nickname = await withClient(url, (client) =>
      client.query(
        `SELECT data_type, is_nullable FROM information_schema.columns
          WHERE table_name = 'pets' AND column_name = 'nickname'`,
      ),
    );
    expect(nickname.rows).toEqual([{ data_type: 'text', is_nullable: 'YES' }]);
  });

  it('names the new folder after the newest one even when the clock is behind it', async () => {
    const paths = await copyOfPrismaFolder();
    await addPetNickname(paths.schemaFile);
    const newest = projectMigrations.at(-1) as string;

    const created = await createMigration('clock_behind', paths, new Date('2001-01-01T00:00:00Z'));

    expect(created?.name).toMatch(/^\d{14}_clock_behind$/);
    expect((created?.name as string) > newest).toBe(true);
    expect(await migrationFolders(paths.migrationsDir)).toEqual([...projectMigrations, created?.name]);
  });

  it('writes the first migration from nothing, and Prisma’s lockfile, into an empty migrations folder', async () => {
    const paths = await copyOfPrismaFolder();
    await rm(paths.migrationsDir, { recursive: true });

    const created = await createMigration('init', paths, new Date('2099-01-01T00:00:00Z'));

    expect(created?.sql).toContain('CREATE TABLE "pets"');
    expect(created?.sql).toContain('CREATE TYPE "PetStatus"');
    expect(await readFile(path.join(paths.migrationsDir, 'migration_lock.toml'), 'utf8')).toContain(
      'provider = "postgresql"',
    );
  });

  it('says which snapshot is missing when the newest migration folder has none', async () => {
    const paths = await copyOfPrismaFolder();
    const newest = projectMigrations.at(-1) as string;
    await rm(path.join(paths.migrationsDir, newest, 'schema.prisma'));
    await expect(nextMigrationSql(paths)).rejects.toThrow(/schema\.prisma is missing/);
  });

  it('refuses a migration name that is not lowercase letters, digits and underscores', async () => {
    const paths = await copyOfPrismaFolder();
    await addPetNickname(paths.schemaFile);
    await expect(createMigration('Add Nickname', paths)).rejects.toThrow(/lowercase letters, digits and underscores/);
    expect(await migrationFolders(paths.migrationsDir)).toEqual(projectMigrations);
  });
});

describe('npm run db:migrate', () => {
  it('migrates the database in DATABASE_URL, then finds nothing pending', { timeout: 120_000 }, async () => {
    const { url } = await freshDatabase();

    const first = await npmRun('db:migrate', [], { DATABASE_URL: url });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Applied: ${projectMigrations.join(', ')}`);
    expect(await tablesOf(url)).toEqual(tables);
    const after = await snapshot(url);

    const second = await npmRun('db:migrate', [], { DATABASE_URL: url });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('No pending migrations.');
    expect(await snapshot(url)).toEqual(after);
  });

  it('stops with the setting named when DATABASE_URL is not a PostgreSQL URL', async () => {
    const result = await npmRun('db:migrate', [], { DATABASE_URL: 'mysql://localhost/petstore' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('DATABASE_URL must be a PostgreSQL connection URL');
  });

  it('migrates the embedded database in DATA_DIR when DATABASE_URL is not set', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-data-'));
    folders.push(dataDir);

    const result = await npmRun('db:migrate', [], { DATA_DIR: dataDir });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Applied: ${projectMigrations.join(', ')}`);
    expect(existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'))).toBe(true);
  });
});

describe('npm run db:migration', () => {
  it('prints its usage and fails without a name', async () => {
    const result = await npmRun('db:migration', [], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: npm run db:migration -- <name>');
  });

  it('refuses a bad name with a one-line message and writes nothing', async () => {
    const before = await readdir(defaultMigrationPaths.migrationsDir, { recursive: true });
    const result = await npmRun('db:migration', ['Bad-Name'], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('must be lowercase letters, digits and underscores');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(defaultMigrationPaths.migrationsDir, { recursive: true })).toEqual(before);
  });
});
