import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

export type { PrismaClient } from './generated/prisma/client.js';

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** Emit a `query` event per SQL statement (tests count them). */
  logQueries?: boolean;
  /** PostgreSQL cancels any statement running longer (SQLSTATE 57014), which we answer 503 TIMEOUT. */
  statementTimeoutMs?: number;
}

/** The one Prisma client of a gateway process, on a pg pool through Prisma's driver adapter. */
export function createDatabase({ url, poolSize, logQueries = false, statementTimeoutMs }: DatabaseOptions) {
  // Our own pool, so its use can be watched (metrics) and its size and timeouts set in one place.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
  });
  const prisma = new PrismaClient({
    // $disconnect ends the pool too.
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    log: logQueries ? [{ emit: 'event', level: 'query' }] : [],
  });
  return { prisma, pool };
}

export function createPrismaClient(options: DatabaseOptions) {
  return createDatabase(options).prisma;
}
