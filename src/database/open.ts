import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { applyPendingMigrations } from '../migrations/migrations.js';
import { createDatabase, createStatementNames, type StatementNames } from './client.js';
import { createStatementTemplates, type StatementTemplates } from './statement-templates.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded.js';
import { createReadRouting } from './replicas.js';

/**
 * The gateway's databases as the settings describe them: the primary (the
 * embedded PGlite when no DATABASE_URL is given, migrated at start where that
 * is ours to do), its streaming replicas, and the routing of reads between
 * them; each pool's size, time bounds and statement names, and their metrics.
 */
export interface Databases {
  primary: ReturnType<typeof createDatabase>;
  replicas: Array<{ name: string } & ReturnType<typeof createDatabase>>;
  readRouting: ReturnType<typeof createReadRouting>;
  /** The names given to statements, shared by every pool (for their metrics). */
  statementNames: StatementNames;
  /** The texts of the gateway's own statements, shared by every pool (for their metrics). */
  statementTemplates: StatementTemplates;
  /** The embedded database, when it is the primary. */
  embedded: EmbeddedPostgres | undefined;
  /** host:port/database of the primary, for the log (never the user or password). */
  address: string;
  close(): Promise<void>;
}

/** Start-up cannot go on: the reason, for people and for the log. */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError';
}

export function databaseAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

export interface DatabaseEvents {
  /** A new connection to the primary was made: it is reachable. */
  onConnect?: () => void;
  /** A statement was cancelled because its request reached its time limit. */
  onCancel?: () => void;
  /** A read was sent to the primary or a replica (with replicas). */
  countRead?: (server: 'primary' | 'replica') => void;
}

export async function openDatabases(config: Config, logger: Logger, events: DatabaseEvents = {}): Promise<Databases> {
  let embedded: EmbeddedPostgres | undefined;
  if (!config.databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir, { idleTimeoutMs: config.embeddedIdleTimeoutMs });
    logger.info({ dataDir: config.dataDir, firstStart: embedded.created }, 'embedded PostgreSQL (PGlite) started');
  }
  const url = config.databaseUrl ?? (embedded as EmbeddedPostgres).url;
  const address = databaseAddress(url);

  if (config.migrateOnStart) {
    try {
      const applied = await applyPendingMigrations(url);
      logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is current');
    } catch (error) {
      await embedded?.stop();
      throw new DatabaseStartError(`the migrations could not be applied to ${address} (${firstLine(error)})`, { cause: error });
    }
  }

  // The primary and each streaming replica get a pool of the same size, with the same time bounds and
  // one set of statement names and texts (a read may borrow a primary connection when its replica is down).
  const statementNames = createStatementNames(config.databasePreparedStatements);
  const statementTemplates = createStatementTemplates();
  const settings = {
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
    statementNames,
    statementTemplates,
    // PgBouncer refuses startup parameters: there the timeout is the database's own setting (checked below).
    statementTimeoutMs: config.databasePooler === 'pgbouncer' ? undefined : config.limits.statementTimeoutMs,
    timeouts: config.limits.database,
    queryPlanCacheMaxEntries: config.prismaQueryPlanCacheMaxEntries,
    onCancel: events.onCancel,
  };
  const primary = createDatabase({ url, ...settings, onConnect: events.onConnect });

  if (config.databasePooler === 'pgbouncer') {
    // Behind PgBouncer nothing per session can be set, so say so when PostgreSQL would let statements run unbounded.
    const shown = await primary.prisma.$queryRaw<Array<{ statement_timeout: string }>>`SHOW statement_timeout`.catch(() => []);
    if (shown[0]?.statement_timeout === '0') {
      logger.warn(
        { setting: 'DATABASE_STATEMENT_TIMEOUT_MS' },
        "behind PgBouncer the statement timeout is the database's own, and it is off: set it with ALTER ROLE … SET statement_timeout",
      );
    }
  }

  // Streaming replicas take the reads.
  const replicas = config.databaseReplicas.urls.map((replicaUrl) => ({ name: databaseAddress(replicaUrl), ...createDatabase({ url: replicaUrl, ...settings }) }));
  const readRouting = createReadRouting({
    primary,
    replicas,
    maxLagMs: config.databaseReplicas.maxLagMs,
    checkIntervalMs: config.databaseReplicas.checkIntervalMs,
    countRead: events.countRead,
    onChange: (replica, previous) => {
      const line = { replica: replica.name, state: replica.state, was: previous, lagSeconds: replica.lagSeconds };
      if (replica.state === 'in rotation') logger.info(line, 'read replica in rotation');
      else logger.warn(line, 'read replica out of rotation: its reads go to the primary');
    },
  });

  return {
    primary,
    replicas,
    readRouting,
    statementNames,
    statementTemplates,
    embedded,
    address,
    async close() {
      readRouting.stop();
      // A request cut at shutdown may still be waiting on the database: its connection is not waited for long.
      await Promise.race([
        Promise.all([primary.prisma.$disconnect(), ...replicas.map((replica) => replica.prisma.$disconnect())]),
        new Promise((resolve) => setTimeout(resolve, 1_000)),
      ]);
      await embedded?.stop();
    },
  };
}
