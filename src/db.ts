import { PrismaPg } from '@prisma/adapter-pg';
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
export function createPrismaClient({ url, poolSize, logQueries = false, statementTimeoutMs }: DatabaseOptions) {
  const adapter = new PrismaPg({
    connectionString: url,
    max: poolSize,
    ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
  });
  return new PrismaClient({ adapter, log: logQueries ? [{ emit: 'event', level: 'query' }] : [] });
}
