import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/database/client.js';
import { createMigratedDatabase, dropDatabase } from '../support/database.js';

/**
 * The gateway's SQL runs as named prepared statements (DATABASE_PREPARED_STATEMENTS, 500 texts by
 * default), so PostgreSQL parses and plans each text once per connection; 0 prepares none, as
 * PgBouncer in transaction mode before 1.21 needs. One connection per client here, so that
 * pg_prepared_statements shows the very session the queries ran on.
 */

let database: { name: string; url: string };
beforeAll(async () => {
  database = await createMigratedDatabase(inject('templateDatabase'));
});
afterAll(() => dropDatabase(database.name));

async function preparedAfterReads(preparedStatements?: number) {
  const { prisma } = createDatabase({ url: database.url, poolSize: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
  try {
    for (let i = 0; i < 3; i++) {
      await prisma.pet.findMany({ where: { status: 'available' }, take: 5 });
      await prisma.category.findMany({ take: 5 });
    }
    const rows = await prisma.$queryRaw<Array<{ name: string; statement: string }>>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`;
    return rows.filter((row) => row.name.startsWith('petstore_'));
  } finally {
    await prisma.$disconnect();
  }
}

describe('prepared statements', () => {
  it('prepares each distinct statement once per connection by default, and reuses it', async () => {
    const prepared = await preparedAfterReads();
    const texts = prepared.map((row) => row.statement);
    // Three runs of each read, one prepared statement each.
    expect(texts.filter((text) => text.includes('"public"."pets"'))).toHaveLength(1);
    expect(texts.filter((text) => text.includes('"public"."categories"'))).toHaveLength(1);
  });

  it('names no more than the limit: later texts run unnamed', async () => {
    const prepared = await preparedAfterReads(1);
    expect(prepared).toHaveLength(1);
    expect(prepared[0]!.statement).toContain('"public"."pets"');
  });

  it('prepares nothing with 0 (for PgBouncer in transaction mode)', async () => {
    expect(await preparedAfterReads(0)).toEqual([]);
  });
});
