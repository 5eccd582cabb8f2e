import { Counter, Gauge, type Registry } from 'prom-client';
import type { LiveQuerySettings } from '../../config.js';
import { DomainError } from '../../errors.js';
import type { WriteNotices } from '../../events/bus.js';
import { withUntoldRanks } from '../dependency-tags/tags.js';

/**
 * The live queries open on this instance. Identical live queries (the same
 * document, variables and caller) share one run (use-live-queries.ts): what is
 * indexed here is each such run, by the dependency tags of its last answer
 * (src/http/dependency-tags/tags.ts). Each
 * write's tags (useWriteTags, told to every instance through the event bus)
 * mark the runs they touch; a marked run happens once its minimum interval has
 * passed since the last one, however many writes marked it meanwhile (those are
 * counted as coalesced), and at most LIVE_QUERY_MAX_CONCURRENT_RUNS at once.
 * When Redis comes back after an outage, every run is marked: writes made on
 * other instances meanwhile were not heard.
 */

/** What a write can touch: a shared run of identical live queries. */
export interface LiveQueryEntry {
  /** What its last answer depends on. */
  tags: ReadonlySet<string>;
  /** A write touched what it depends on: run it again (at its pace). */
  invalidate(): void;
}

export interface LiveQueryWatch {
  /** Its last answer depends on these now. */
  retag(tags: ReadonlySet<string>): void;
  /** Counts a run, and the new answers it sent. */
  ran(pushes: number): void;
  /** Another write arrived while a run was already due. */
  coalesced(): void;
  /** No live query needs it any more. */
  close(): void;
}

export interface LiveQueries {
  settings: LiveQuerySettings;
  /**
   * A new live query of `client` on `connection`: admitted (close it when it ends), or refused
   * (RATE_LIMITED naming the setting it is over) when a limit is reached.
   */
  admit(where: { client: string; connection: object | undefined }): { close(): void } | LiveQueryRefusal;
  /** Indexes a shared run by what its answer depends on. */
  watch(entry: LiveQueryEntry): LiveQueryWatch;
  /**
   * Waits for one of the LIVE_QUERY_MAX_CONCURRENT_RUNS places to run again; returns its release. A
   * write that touches hundreds of live queries must not queue hundreds of reads at the database
   * pool at once (those past DATABASE_MAX_WAITING would be refused).
   */
  runTurn(): Promise<() => void>;
  /** Ends every live query (their clients see them complete): for shutdown. */
  endAll(): void;
  /** Called by each live query with its own ending, so endAll can reach it. */
  onEndAll(end: () => void): () => void;
  /** Live queries admitted and not yet closed. */
  readonly size: number;
}

/** A live query refused by a limit: the error, and the setting it names. */
export class LiveQueryRefusal extends DomainError {
  constructor(
    readonly limit: string,
    max: number,
    what: string,
  ) {
    super('RATE_LIMITED', `Too many live queries ${what} (the limit is the setting ${limit}, ${max}); end one before starting another.`);
  }
}

export interface LiveQueryStoreOptions {
  settings: LiveQuerySettings;
  writes: WriteNotices;
  registry?: Registry;
}

export function createLiveQueries({ settings, writes, registry }: LiveQueryStoreOptions): LiveQueries {
  const byTag = new Map<string, Set<LiveQueryEntry>>();
  const watched = new Set<LiveQueryEntry>();
  let admitted = 0;
  const perClient = new Map<string, number>();
  const perConnection = new WeakMap<object, number>();
  const endings = new Set<() => void>();
  const counters = registry ? liveQueryMetrics(registry, () => admitted) : undefined;
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  const index = (entry: LiveQueryEntry, tags: ReadonlySet<string>) => {
    for (const tag of tags) {
      let entries = byTag.get(tag);
      if (!entries) byTag.set(tag, (entries = new Set()));
      entries.add(entry);
    }
  };
  const unindex = (entry: LiveQueryEntry, tags: ReadonlySet<string>) => {
    for (const tag of tags) {
      const entries = byTag.get(tag);
      entries?.delete(entry);
      if (entries?.size === 0) byTag.delete(tag);
    }
  };

  // Other instances' writes among them, which may come from an earlier version (withUntoldRanks).
  writes.listen((told) => {
    const tags = withUntoldRanks(told);
    const touched = new Set<LiveQueryEntry>();
    for (const tag of tags) for (const entry of byTag.get(tag) ?? []) touched.add(entry);
    for (const entry of touched) entry.invalidate();
  });
  writes.onMissed(() => {
    counters?.missed.inc();
    for (const entry of watched) entry.invalidate();
  });

  return {
    settings,
    get size() {
      return admitted;
    },
    admit({ client, connection }) {
      const refuse = (limit: string, max: number, what: string) => {
        counters?.refusals.inc({ limit });
        return new LiveQueryRefusal(limit, max, what);
      };
      if (admitted >= settings.maxPerInstance) return refuse('LIVE_QUERY_MAX_PER_INSTANCE', settings.maxPerInstance, 'on this instance');
      const ofClient = perClient.get(client) ?? 0;
      if (ofClient >= settings.maxPerClient) return refuse('LIVE_QUERY_MAX_PER_CLIENT', settings.maxPerClient, 'for this client');
      const onConnection = connection ? (perConnection.get(connection) ?? 0) : 0;
      if (connection && onConnection >= settings.maxPerConnection) {
        return refuse('LIVE_QUERY_MAX_PER_CONNECTION', settings.maxPerConnection, 'on this connection');
      }
      admitted++;
      perClient.set(client, ofClient + 1);
      if (connection) perConnection.set(connection, onConnection + 1);
      let closed = false;
      return {
        close() {
          if (closed) return;
          closed = true;
          admitted--;
          const left = (perClient.get(client) ?? 1) - 1;
          if (left > 0) perClient.set(client, left);
          else perClient.delete(client);
          if (connection) perConnection.set(connection, Math.max(0, (perConnection.get(connection) ?? 1) - 1));
        },
      };
    },
    watch(entry) {
      let tags = entry.tags;
      let closed = false;
      watched.add(entry);
      index(entry, tags);
      return {
        retag(next) {
          if (closed) return;
          unindex(entry, tags);
          tags = next;
          index(entry, tags);
        },
        ran(pushes) {
          counters?.reexecutions.inc();
          if (pushes > 0) counters?.pushes.inc(pushes);
        },
        coalesced() {
          counters?.coalesced.inc();
        },
        close() {
          if (closed) return;
          closed = true;
          unindex(entry, tags);
          watched.delete(entry);
        },
      };
    },
    runTurn() {
      if (running < settings.maxConcurrentRuns) {
        running++;
        return Promise.resolve(release);
      }
      return new Promise((resolve) => waiting.push(() => resolve(release)));
    },
    endAll() {
      for (const end of [...endings]) end();
    },
    onEndAll(end) {
      endings.add(end);
      return () => endings.delete(end);
    },
  };
}

/** petstore_live_queries and the counters of what they cost. */
function liveQueryMetrics(registry: Registry, open: () => number) {
  new Gauge({
    name: 'petstore_live_queries',
    help: 'Live queries (@live) open on this instance right now.',
    registers: [registry],
    collect() {
      this.set(open());
    },
  });
  return {
    reexecutions: new Counter({
      name: 'petstore_live_query_reexecutions_total',
      help: 'Runs of live queries after their first answer, because a write touched what their answer depends on (or Redis came back); identical live queries share one run.',
      registers: [registry],
    }),
    pushes: new Counter({
      name: 'petstore_live_query_pushes_total',
      help: 'New answers sent to live queries (re-executions whose answer differed from the last one sent).',
      registers: [registry],
    }),
    coalesced: new Counter({
      name: 'petstore_live_query_coalesced_writes_total',
      help: 'Writes that touched a live query already due to run again: folded into that run.',
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'petstore_live_query_refusals_total',
      help: 'Live queries refused by a limit, by the setting (LIVE_QUERY_MAX_PER_CONNECTION, _PER_CLIENT, _PER_INSTANCE).',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    missed: new Counter({
      name: 'petstore_live_query_redis_recoveries_total',
      help: 'Times Redis came back after an outage and every live query was run again (writes of other instances may have been missed).',
      registers: [registry],
    }),
  };
}
