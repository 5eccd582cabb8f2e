import type pg from 'pg';
import { DatabaseOverloadedError, type PrismaClient } from './client.js';

/**
 * Where each read runs: on a streaming replica that is healthy and has
 * replayed what the caller needs, else on the primary.
 *
 * Not @prisma/extension-read-replicas: it picks a replica at random for every
 * read outside a transaction and knows nothing of a replica's health, its lag
 * or a caller's last write. The choice here is made once per request (one
 * GraphQL query or REST read runs on one server, so its parts agree with each
 * other), from what a check of every replica every `checkIntervalMs` found.
 *
 * Positions are PostgreSQL's WAL positions (pg_lsn, `16/B374D848`). A write's
 * position is the primary's `pg_current_wal_lsn()` read after it committed; a
 * read that carries one goes to a replica only once the replica's
 * `pg_last_wal_replay_lsn()` was seen at or past it.
 */

export type ReplicaState = 'starting' | 'in rotation' | 'lagging' | 'unreachable' | 'not a replica';

export interface ReplicaStatus {
  /** host:port/database (never the password). */
  name: string;
  state: ReplicaState;
  /** How far behind the primary it was at the last check, in seconds; null when unknown. */
  lagSeconds: number | null;
  /** The last position it had replayed, as PostgreSQL writes it. */
  replayed: string | null;
}

export interface ReplicaConnection {
  name: string;
  prisma: PrismaClient;
  pool: pg.Pool;
}

export interface Reader {
  prisma: PrismaClient;
  /** The replica's name, or undefined for the primary. */
  replica: string | undefined;
}

export interface ReadRouting {
  /** True when there are replicas to route to. */
  readonly enabled: boolean;
  /** Where a read runs; after `readAfter` (a write position) only on a replica known to have replayed it. */
  reader(readAfter?: bigint): Reader;
  /** The primary's current WAL position: asked for after a write has committed, so it is at or past that write. */
  writePosition(): Promise<string | undefined>;
  status(): ReplicaStatus[];
  stop(): void;
}

export interface ReadRoutingOptions {
  primary: { prisma: PrismaClient; pool: pg.Pool };
  replicas: ReplicaConnection[];
  /** A replica further behind than this is taken out of rotation until it catches up. */
  maxLagMs: number;
  checkIntervalMs: number;
  /** Called when a replica enters or leaves rotation. */
  onChange?: (status: ReplicaStatus, previous: ReplicaState) => void;
  /** Counts each routed read by where it went. */
  countRead?: (to: 'primary' | 'replica') => void;
}

/** `16/B374D848` → its 64-bit value; undefined for anything else. */
export function parsePosition(text: string): bigint | undefined {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

interface Replica extends ReplicaConnection {
  /** A connection to the replica's own server (never the primary's), for its checks. */
  ownConnection: () => Promise<pg.PoolClient>;
  state: ReplicaState;
  replayed: bigint | undefined;
  replayedText: string | null;
  lagSeconds: number | null;
}

export function createReadRouting(options: ReadRoutingOptions): ReadRouting {
  const { primary, maxLagMs, checkIntervalMs, onChange, countRead } = options;
  const replicas: Replica[] = options.replicas.map((connection) => ({
    ...connection,
    ownConnection: connection.pool.connect.bind(connection.pool),
    state: 'starting',
    replayed: undefined,
    replayedText: null,
    lagSeconds: null,
  }));
  const toPrimary: Reader = { prisma: primary.prisma, replica: undefined };
  if (replicas.length === 0) {
    return {
      enabled: false,
      reader: () => toPrimary,
      writePosition: async () => undefined,
      status: () => [],
      stop: () => undefined,
    };
  }

  const statusOf = (replica: Replica): ReplicaStatus => ({
    name: replica.name,
    state: replica.state,
    lagSeconds: replica.lagSeconds,
    replayed: replica.replayedText,
  });
  const setState = (replica: Replica, state: ReplicaState) => {
    const previous = replica.state;
    replica.state = state;
    if (previous !== state) onChange?.(statusOf(replica), previous);
  };

  // A replica whose connections break (a server shut down, a cut network) leaves rotation at once
  // rather than at the next check; the check brings it back. A read routed to it that cannot get a
  // connection there runs on a connection of the primary instead: it is answered, not failed.
  for (const replica of replicas) {
    replica.pool.on('error', () => setState(replica, 'unreachable'));
    borrowPrimaryWhenDown(replica, primary.pool, () => setState(replica, 'unreachable'));
  }

  // The primary's positions as the checks saw them, oldest first, each with when it was first
  // seen: a replica that has not replayed a position is at least as far behind as that position is old.
  const written: Array<{ position: bigint; seenAt: number }> = [];
  const lagOf = (replayed: bigint, now: number): number => {
    const first = written.find((entry) => entry.position > replayed);
    return first ? (now - first.seenAt) / 1000 : 0;
  };

  async function checkReplica(replica: Replica, now: number) {
    try {
      const client = await replica.ownConnection();
      let rows: Array<{ recovering: boolean; replayed: string | null }>;
      try {
        ({ rows } = await client.query('SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS replayed'));
        client.release();
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      const row = rows[0];
      if (!row?.recovering || row.replayed === null) {
        // Promoted, or never a replica: its data may part from the primary's, so no reads go there.
        replica.lagSeconds = null;
        setState(replica, 'not a replica');
        return;
      }
      replica.replayed = parsePosition(row.replayed);
      replica.replayedText = row.replayed;
      replica.lagSeconds = replica.replayed === undefined ? null : lagOf(replica.replayed, now);
      setState(replica, replica.lagSeconds !== null && replica.lagSeconds * 1000 <= maxLagMs ? 'in rotation' : 'lagging');
    } catch {
      // Bounded by the pool's connect and query timeouts (DATABASE_CONNECT_TIMEOUT_MS, DATABASE_QUERY_TIMEOUT_MS).
      setState(replica, 'unreachable');
    }
  }

  /** The primary's write position now (bounded by its pool's timeouts). */
  const primaryPosition = async () =>
    (await primary.pool.query<{ position: string }>('SELECT pg_current_wal_lsn()::text AS position')).rows[0]?.position;

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  async function check() {
    const now = Date.now();
    try {
      const position = parsePosition((await primaryPosition()) ?? '');
      if (position !== undefined && (written.length === 0 || position > written.at(-1)!.position)) {
        written.push({ position, seenAt: now });
      }
    } catch {
      // The primary's outage is the readiness check's business; the replicas are still checked.
    }
    await Promise.all(replicas.map((replica) => checkReplica(replica, now)));
    // Positions every replica has replayed are no longer needed to measure anybody's lag.
    const slowest = replicas.reduce<bigint | undefined>(
      (low, replica) => (replica.replayed === undefined || (low !== undefined && low < replica.replayed) ? low : replica.replayed),
      undefined,
    );
    while (written.length > 1 && slowest !== undefined && written[0]!.position <= slowest) written.shift();
    if (written.length > 10_000) written.splice(0, written.length - 10_000);
    if (!stopped) timer = setTimeout(check, checkIntervalMs).unref();
  }
  void check();

  let next = 0;
  return {
    enabled: true,
    reader(readAfter) {
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[(next + tried) % replicas.length]!;
        if (replica.state !== 'in rotation') continue;
        if (readAfter !== undefined && (replica.replayed === undefined || replica.replayed < readAfter)) continue;
        next = (next + tried + 1) % replicas.length;
        countRead?.('replica');
        return { prisma: replica.prisma, replica: replica.name };
      }
      countRead?.('primary');
      return toPrimary;
    },
    writePosition: () => primaryPosition().catch(() => undefined),
    status: () => replicas.map(statusOf),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

type Connect = (callback?: (error: Error | undefined, client?: pg.PoolClient, release?: () => void) => void) => unknown;

/**
 * pg-pool's query() and Prisma's transactions both take their connection
 * through connect(), so a replica's pool that hands out one of the primary's
 * connections when its own server cannot be reached moves every kind of read
 * over. Refusals for load (DatabaseOverloadedError) are not failures of the
 * replica and stay refusals. Statement names are shared by all the pools
 * (createStatementNames), so a prepared name means the same text on both.
 */
function borrowPrimaryWhenDown(replica: Replica, primaryPool: pg.Pool, markDown: () => void) {
  const pool = replica.pool as unknown as { connect: Connect };
  const own = replica.ownConnection;
  const fromPrimary = () => primaryPool.connect();
  pool.connect = (callback) => {
    const connection =
      replica.state === 'unreachable'
        ? fromPrimary()
        : own().catch((error: unknown) => {
            if (error instanceof DatabaseOverloadedError) throw error;
            markDown();
            return fromPrimary();
          });
    if (!callback) return connection;
    connection.then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error),
    );
    return undefined;
  };
}
