import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/database/embedded.js';
import { applyPendingMigrations } from '../../src/migrations/migrations.js';
import { databaseUrl, dropDatabase, uniqueName, withAdmin } from './database.js';
import { pgbouncerAvailable, startPgBouncer } from './pgbouncer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** With TEST_THROUGH_PGBOUNCER=1: the test gateways reach PostgreSQL through a PgBouncer on this port. */
    pgbouncerPort: number | undefined;
    /**
     * With TEST_ON_EMBEDDED=1: a DATA_DIR holding a migrated embedded database (PGlite), which each test
     * gateway copies and serves from, as `npm start` with no DATABASE_URL does.
     */
    embeddedTemplate: string | undefined;
  }
}

/**
 * Migrates one template database with the project's own migration command;
 * each test file then copies it, which takes milliseconds, and drops its copy.
 * With TEST_THROUGH_PGBOUNCER=1 it also starts a PgBouncer in transaction mode, through which
 * every test gateway then reaches its database; with TEST_ON_EMBEDDED=1 every test gateway serves an
 * embedded database (PGlite) of its own instead (npm test runs the GraphQL and REST suites both ways).
 */
export default async function setup(project: TestProject) {
  const template = uniqueName('petstore_template');
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${template}"`));
  await applyPendingMigrations(databaseUrl(template));
  project.provide('templateDatabase', template);
  // Without PgBouncer (outside CI, which installs it) the pass runs straight on PostgreSQL, and says so.
  const throughBouncer = Boolean(process.env.TEST_THROUGH_PGBOUNCER) && pgbouncerAvailable('the pass through PgBouncer');
  const bouncer = throughBouncer ? await startPgBouncer() : undefined;
  project.provide('pgbouncerPort', bouncer ? Number(new URL(bouncer.urlOf('postgres')).port) : undefined);
  const embeddedTemplate = process.env.TEST_ON_EMBEDDED ? await migratedEmbeddedDataDir() : undefined;
  project.provide('embeddedTemplate', embeddedTemplate);
  return async () => {
    if (embeddedTemplate) await rm(embeddedTemplate, { recursive: true, force: true });
    await bouncer?.stop();
    await dropDatabase(template);
  };
}

/** A DATA_DIR with an embedded database migrated by the project's own migrations (no demo data). */
async function migratedEmbeddedDataDir(): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-embedded-template-'));
  const embedded = await startEmbeddedPostgres(dataDir);
  try {
    await applyPendingMigrations(embedded.url);
  } finally {
    await embedded.stop();
  }
  return dataDir;
}
