import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { type DatabaseTimeouts, DEFAULT_PREPARED_STATEMENTS } from '../config.js';
import { cancelWithRequest } from './cancellation.js';
import { createStatementTemplates, type StatementTemplates } from './statement-templates.js';
import { PrismaClient } from '../generated/prisma/client.js';

export type { PrismaClient } from '../generated/prisma/client.js';

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** Emit a `query` event per SQL statement (tests count them). */
  logQueries?: boolean;
  /** PostgreSQL cancels any statement running longer (SQLSTATE 57014), which we answer 503 TIMEOUT. */
  statementTimeoutMs?: number;
  timeouts?: DatabaseTimeouts;
  /** Called each time a new connection to PostgreSQL is made: the database is reachable. */
  onConnect?: () => void;
  /** Called for each statement cancelled because its request reached its time limit. */
  onCancel?: () => void;
  /** How many distinct statements are prepared (named) per connection; 0 prepares none (PgBouncer before 1.21). */
  preparedStatements?: number;
  /**
   * The names given to statements, shared by the primary and its replicas: a read may borrow a
   * connection of the primary's pool (src/database/replicas.ts), and a name must mean the same
   * text on every connection it can meet.
   */
  statementNames?: StatementNames;
  /** Query plans Prisma keeps by query shape (its own LRU, 1,000 by default; 0 keeps none). */
  queryPlanCacheMaxEntries?: number;
  /** Called with each statement of the gateway's own (find-many.ts), which Prisma's `query` events do not see. */
  onStatement?: (sql: string) => void;
  /** The texts of the gateway's own statements by the structure of their reads, shared by the primary and its replicas as the names are. */
  statementTemplates?: StatementTemplates;
}

/** How the gateway's own statements (find-many.ts) run beside a client's Prisma: on its pool, under its statement names. */
export interface DirectAccess {
  pool: pg.Pool;
  /** The name a text is prepared under (undefined: unnamed); absent when nothing is prepared. */
  nameOf?: (sql: string) => string | undefined;
  onStatement?: (sql: string) => void;
  templates: StatementTemplates;
}

const directAccess = new WeakMap<object, DirectAccess>();

/** The pool and statement names behind a client made by createDatabase; undefined for any other. */
export function directAccessOf(prisma: PrismaClient): DirectAccess | undefined {
  return directAccess.get(prisma);
}

/**
 * Runs one statement of the gateway's own on the client's pool (so with its time limits, statement
 * cancellation, load shedding and prepared-statement names), not through Prisma: its raw queries
 * cost as much in Prisma's request pipeline as the rest of a read (14% of the orders page's CPU,
 * profiled). Undefined when the client has no pool of ours (a transaction's client, say).
 */
export function runOnPool<Row>(
  prisma: object,
  text: string,
  values: readonly unknown[],
  rowMode?: 'array',
): Promise<Row[]> | undefined {
  const access = directAccess.get(prisma);
  return access && run<Row>(access, text, values, rowMode);
}

async function run<Row>(access: DirectAccess, text: string, values: readonly unknown[], rowMode: 'array' | undefined): Promise<Row[]> {
  access.onStatement?.(text);
  // connect() awaited here, not pool.query's callback: a connection handed over by another request's release
  // would run that callback in the other request's context, and tie this statement to its time limit.
  const client = await access.pool.connect();
  // As pool.query does: an error of the connection while it is ours (PostgreSQL shutting down, say) is this
  // statement's, not an uncaught one, and such a connection is not returned to the pool.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const { rows } = await client.query({
      text,
      values: values as unknown[],
      ...(rowMode ? { rowMode } : {}),
      ...(access.nameOf ? { name: access.nameOf(text) } : {}),
    });
    client.removeListener('error', onError);
    client.release(broken);
    return rows as Row[];
  } catch (error) {
    // As pool.query does: a connection whose statement failed is not trusted again.
    client.removeListener('error', onError);
    client.release(error as Error);
    throw error;
  }
}

/**
 * The one row a statement of the gateway's own answers with (a database function's outcome): on the
 * client's pool when it has one (runOnPool, pg's types: int8 as text), else through Prisma's raw
 * query (a transaction's client; int8 as bigint).
 */
export async function oneRow<Row>(prisma: Pick<PrismaClient, '$queryRawUnsafe'>, text: string, values: readonly unknown[]): Promise<Row> {
  const rows = runOnPool<Row>(prisma, text, values) ?? prisma.$queryRawUnsafe<Row[]>(text, ...values);
  return (await rows)[0]!;
}

/** Too many requests already wait for a database connection: refused at once rather than queued. */
export class DatabaseOverloadedError extends Error {
  constructor(waiting: number) {
    super(`${waiting} requests already wait for a database connection.`);
    this.name = 'DatabaseOverloadedError';
  }
}

/** Errors after which a connection cannot be trusted: it is closed rather than returned to the pool. */
const BROKEN_CONNECTION = /Query read timeout|Connection terminated|ECONNRESET|EPIPE|read ETIMEDOUT/;

/**
 * The one Prisma client of a gateway process, on a pg pool through Prisma's
 * driver adapter. Every call is bounded in time: connecting and waiting for a
 * connection (connectTimeoutMs), each statement on the server
 * (statement_timeout) and on the client (queryTimeoutMs, for a server that
 * stops answering); TCP keep-alive finds dead idle connections. A connection
 * whose statement timed out on the client or whose socket failed is destroyed,
 * also when a transaction hands it back, so a silently lost connection never
 * goes back into the pool.
 */
export function createDatabase({
  url,
  poolSize,
  logQueries = false,
  statementTimeoutMs,
  timeouts,
  onConnect,
  onCancel,
  preparedStatements = DEFAULT_PREPARED_STATEMENTS,
  statementNames,
  queryPlanCacheMaxEntries,
  onStatement,
  statementTemplates = createStatementTemplates(),
}: DatabaseOptions) {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
    ...(timeouts
      ? {
          connectionTimeoutMillis: timeouts.connectTimeoutMs,
          query_timeout: timeouts.queryTimeoutMs,
          idleTimeoutMillis: timeouts.idleTimeoutMs,
          keepAlive: true,
          keepAliveInitialDelayMillis: 10_000,
        }
      : {}),
  });
  // An idle connection's error (a restart, a dropped database) removes it from the pool, nothing more; pg-pool
  // throws it when the pool has no listener. Prisma's adapter adds one, but only once Prisma first connects, and
  // a client may serve the gateway's own statements (find-many.ts) before that.
  pool.on('error', () => undefined);
  if (onConnect) pool.on('connect', onConnect);
  // A statement still running when its request is answered 503 TIMEOUT is cancelled (cancellation.ts).
  pool.on('connect', (client) => cancelWithRequest(client, onCancel));
  if (timeouts) {
    const broken = new WeakMap<pg.PoolClient, Error>();
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      const note = (error: unknown) => {
        if (error instanceof Error && BROKEN_CONNECTION.test(`${error.message} ${(error as { code?: string }).code ?? ''}`)) {
          broken.set(client, error);
        }
      };
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const last = args.at(-1);
        if (typeof last === 'function') {
          args[args.length - 1] = (error: unknown, ...rest: unknown[]) => {
            note(error);
            return (last as (...callbackArgs: unknown[]) => unknown)(error, ...rest);
          };
        }
        const result = query(...args);
        if (result instanceof Promise) result.catch(note);
        return result;
      };
      client.on('error', (error) => broken.set(client, error));
    });
    pool.on('acquire', (client) => {
      const release = client.release;
      client.release = (error?: Error | boolean) => release(error ?? broken.get(client));
    });
    // Shed load early: a request that would only queue behind many others is refused at once.
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
    (pool as { connect: unknown }).connect = (...args: unknown[]) => {
      if (pool.waitingCount >= timeouts.maxWaiting) {
        const error = new DatabaseOverloadedError(pool.waitingCount);
        const callback = args[0];
        if (typeof callback === 'function') {
          process.nextTick(() => (callback as (error: Error) => void)(error));
          return undefined;
        }
        return Promise.reject(error);
      }
      return connect(...args);
    };
  }
  // One generator for Prisma's statements and the gateway's own: a name must mean one text on a connection.
  const names = preparedStatements > 0 ? (statementNames ?? createStatementNames(preparedStatements)) : undefined;
  const prisma = new PrismaClient({
    // $disconnect ends the pool too.
    adapter: new PrismaPg(pool, {
      disposeExternalPool: true,
      ...(names ? { statementNameGenerator: names } : {}),
    }),
    log: logQueries ? [{ emit: 'event', level: 'query' }] : [],
    ...(queryPlanCacheMaxEntries !== undefined ? { queryPlanCacheMaxSize: queryPlanCacheMaxEntries } : {}),
  });
  directAccess.set(prisma, {
    pool,
    ...(names ? { nameOf: (sql: string) => names({ sql }) } : {}),
    ...(onStatement ? { onStatement } : {}),
    templates: statementTemplates,
  });
  return { prisma, pool };
}

export function createPrismaClient(options: DatabaseOptions) {
  return createDatabase(options).prisma;
}

/**
 * Names for Prisma's SQL, so that each pooled connection prepares a statement
 * once and then only binds and executes it: PostgreSQL skips parsing, and
 * after five runs planning (measured on the pets page: 0.18 ms parse and about
 * 0.5 ms of planning per request before). Prisma's statements are a handful of
 * shapes, but a client choosing its selections can make new ones, so only the
 * first `max` distinct texts get a name, for good (a name must never change
 * its text); later ones run unnamed, as before.
 */
export type StatementNames = ((query: { sql: string }) => string) & {
  /** Texts named so far (at most `max`). */
  readonly size: number;
  readonly max: number;
};

export function createStatementNames(max: number): StatementNames {
  const names = new Map<string, string>();
  // The adapter passes the name on as pg's `name`, where undefined means an unnamed statement.
  const nameOf = (query: { sql: string }) => {
    let name = names.get(query.sql);
    // A raw text of several commands cannot be prepared (PostgreSQL refuses it): left unnamed.
    if (name === undefined && names.size < max && !query.sql.includes(';')) {
      name = `petstore_${names.size}`;
      names.set(query.sql, name);
    }
    return name as string;
  };
  return Object.defineProperties(nameOf, {
    size: { get: () => names.size },
    max: { value: max },
  }) as StatementNames;
}
