import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MigrationList } from '@prisma/schema-engine-wasm';
import { noSchemaFilter, withSchemaEngine } from './schema-engine.js';

/**
 * Migrations in Prisma's own layout (`prisma/migrations/<timestamp>_<name>/migration.sql`
 * plus `migration_lock.toml`), so `prisma migrate deploy` applies the same files
 * wherever Prisma's native engine is available.
 *
 * Each migration folder also keeps `schema.prisma`, the schema that migration
 * brings the database to. Prisma ignores extra files in a migration folder; we
 * use the newest one to compute the next migration without a shadow database.
 */
export interface MigrationPaths {
  /** The Prisma schema as it is now. */
  schemaFile: string;
  /** The migrations folder. */
  migrationsDir: string;
}

/**
 * The folder with the project's package.json (and prisma/), whether this
 * file runs from src/migrations (tsx) or from dist/src/migrations (built):
 * a fixed '../..' would point into dist/, where no migrations are found, and
 * every database would then look current.
 */
function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '../..');
  }
}

export const projectRoot = findProjectRoot(import.meta.dirname);

export const defaultMigrationPaths: MigrationPaths = {
  schemaFile: path.join(projectRoot, 'prisma/schema.prisma'),
  migrationsDir: path.join(projectRoot, 'prisma/migrations'),
};

const MIGRATION_FILE = 'migration.sql';
const SCHEMA_SNAPSHOT = 'schema.prisma';
const LOCKFILE = 'migration_lock.toml';

async function migrationFolders(migrationsDir: string): Promise<string[]> {
  if (!existsSync(migrationsDir)) return [];
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

async function loadMigrationList(migrationsDir: string): Promise<MigrationList> {
  const lockPath = path.join(migrationsDir, LOCKFILE);
  const folders = await migrationFolders(migrationsDir);
  return {
    baseDir: migrationsDir,
    lockfile: { path: LOCKFILE, content: existsSync(lockPath) ? await readFile(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      folders.map(async (folder) => {
        const file = path.join(migrationsDir, folder, MIGRATION_FILE);
        const content = await readFile(file, 'utf8').then(
          (text) => ({ tag: 'ok' as const, value: text }),
          (error: Error) => ({ tag: 'error' as const, value: error.message }),
        );
        return { path: folder, migrationFile: { path: MIGRATION_FILE, content } };
      }),
    ),
  };
}

/**
 * Applies every migration not yet recorded in `_prisma_migrations`, as
 * `prisma migrate deploy` does. Returns the names it applied (none on a second run).
 */
export async function applyPendingMigrations(
  databaseUrl: string,
  paths: MigrationPaths = defaultMigrationPaths,
): Promise<string[]> {
  const migrationsList = await loadMigrationList(paths.migrationsDir);
  const schemas = await schemaOf(paths);
  const { appliedMigrationNames } = await withSchemaEngine({ databaseUrl, schemas }, (engine) =>
    engine.applyMigrations({ migrationsList, filters: noSchemaFilter }),
  );
  return appliedMigrationNames;
}

/** Names of the migrations in the folder that the database has not recorded as applied. */
export async function pendingMigrations(
  appliedNames: Iterable<string>,
  paths: MigrationPaths = defaultMigrationPaths,
): Promise<string[]> {
  const applied = new Set(appliedNames);
  return (await migrationFolders(paths.migrationsDir)).filter((name) => !applied.has(name));
}

/**
 * The SQL that takes a database from the newest migration's schema to the
 * schema file as it is now: what `prisma migrate dev` would write. Empty when
 * nothing changed.
 */
export async function nextMigrationSql(paths: MigrationPaths = defaultMigrationPaths): Promise<string> {
  const folders = await migrationFolders(paths.migrationsDir);
  const newest = folders.at(-1);
  const schemas = await schemaOf(paths);
  const from = newest
    ? { tag: 'schemaDatamodel' as const, files: [await snapshotOf(paths.migrationsDir, newest)] }
    : { tag: 'empty' as const };
  const result = await withSchemaEngine({ schemas }, (engine) =>
    engine.diff({
      from,
      to: { tag: 'schemaDatamodel', files: schemas.map(([file, content]) => ({ path: file, content })) },
      script: true,
      exitCode: null,
      filters: noSchemaFilter,
    }),
  );
  const sql = result.stdout ?? '';
  return sql.includes('This is an empty migration.') ? '' : sql;
}

// The engine needs the schema it serves from the start, even for a diff.
async function schemaOf(paths: MigrationPaths): Promise<Array<[string, string]>> {
  return [[paths.schemaFile, await readFile(paths.schemaFile, 'utf8')]];
}

async function snapshotOf(migrationsDir: string, folder: string) {
  const file = path.join(migrationsDir, folder, SCHEMA_SNAPSHOT);
  if (!existsSync(file)) {
    throw new Error(
      `${path.relative(projectRoot, file)} is missing: every migration folder keeps the schema it migrates to.`,
    );
  }
  return { path: file, content: await readFile(file, 'utf8') };
}

/** `20261121153000` in UTC, the timestamp prefix Prisma gives migration folders. */
function migrationTimestamp(now: Date): string {
  return now.toISOString().replace(/\D/g, '').slice(0, 14);
}

/**
 * The new folder's timestamp: now, or one second after the newest migration
 * when that one is stamped later (a clock behind the colleague's who wrote it).
 * Migrations apply in folder-name order, and the next diff starts from the
 * newest folder's snapshot, so a new migration must always sort last.
 */
function nextMigrationTimestamp(now: Date, newest: string | undefined): string {
  const stamp = migrationTimestamp(now);
  const last = newest?.match(/^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/);
  if (!last || stamp > last[0]) return stamp;
  const [year, month, day, hour, minute, second] = last.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return migrationTimestamp(new Date(Date.UTC(year, month - 1, day, hour, minute, second + 1)));
}

export interface CreatedMigration {
  name: string;
  sql: string;
}

/**
 * Writes the next migration folder for the current schema, or returns
 * undefined when the schema has not changed since the newest migration.
 */
export async function createMigration(
  name: string,
  paths: MigrationPaths = defaultMigrationPaths,
  now = new Date(),
): Promise<CreatedMigration | undefined> {
  if (!/^[a-z0-9_]+$/.test(name)) {
    throw new Error(`Migration name "${name}" must be lowercase letters, digits and underscores.`);
  }
  const sql = await nextMigrationSql(paths);
  if (!sql) return undefined;
  const newest = (await migrationFolders(paths.migrationsDir)).at(-1);
  const folderName = `${nextMigrationTimestamp(now, newest)}_${name}`;
  const folder = path.join(paths.migrationsDir, folderName);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, MIGRATION_FILE), sql);
  await copyFile(paths.schemaFile, path.join(folder, SCHEMA_SNAPSHOT));
  const lockPath = path.join(paths.migrationsDir, LOCKFILE);
  if (!existsSync(lockPath)) {
    await writeFile(
      lockPath,
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "postgresql"\n',
    );
  }
  return { name: folderName, sql };
}
