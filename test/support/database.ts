import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the tests use: TEST_DATABASE_URL, by default the local PostgreSQL. */
export const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export const uniqueName = (prefix: string) => `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;

export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** A new, empty database (no tables). */
export async function createEmptyDatabase(): Promise<{ name: string; url: string }> {
  const name = uniqueName('petstore_test');
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`));
  return { name, url: databaseUrl(name) };
}

/**
 * A new database copied from the migrated template that global set-up made:
 * every table, no rows. PostgreSQL refuses to copy a template that another
 * copy is reading at that instant, so a refusal is tried again.
 */
export async function createMigratedDatabase(template: string): Promise<{ name: string; url: string }> {
  const name = uniqueName('petstore_test');
  for (let attempt = 0; ; attempt++) {
    try {
      await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
      return { name, url: databaseUrl(name) };
    } catch (error) {
      if (attempt >= 20 || !String(error).includes('is being accessed by other users')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    }
  }
}
