import type { TestProject } from 'vitest/node';
import { applyPendingMigrations } from '../../src/migrations/migrations.js';
import { databaseUrl, dropDatabase, uniqueName, withAdmin } from './database.js';
import { pgbouncerAvailable, startPgBouncer } from './pgbouncer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** With TEST_THROUGH_PGBOUNCER=1: the test gateways reach PostgreSQL through a PgBouncer on this port. */
    pgbouncerPort: number | undefined;
  }
}

/**
 * Migrates one template database with the project's own migration command;
 * each test file then copies it, which takes milliseconds, and drops its copy.
 * With TEST_THROUGH_PGBOUNCER=1 it also starts a PgBouncer in transaction mode, through which
 * every test gateway then reaches its database (npm test runs the GraphQL and REST suites so).
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
  return async () => {
    await bouncer?.stop();
    await dropDatabase(template);
  };
}
