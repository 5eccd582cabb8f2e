import type { Databases } from '../database/open.js';
import type { ReplicaStatus } from '../database/replicas.js';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { createCacheMetrics } from './caches.js';

/** A label value stood in for by `other` once a label has this many values (or for an overlong one). */
export const OTHER = 'other';

export interface MetricsOptions {
  /**
   * Distinct operation names (GraphQL operations are named by their clients)
   * and clients kept as label values; later ones are counted as `other`, so
   * that no client can grow the metrics without bound.
   */
  maxLabelValues?: number;
}

/** Keeps a label to its first `limit` distinct values (each at most 100 characters); the rest become `other`. */
export function boundedLabel(limit: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit || value.length > 100) return OTHER;
    seen.add(value);
    return value;
  };
}

/**
 * The gateway's Prometheus metrics (prom-client), one registry per gateway so
 * that tests running several gateways in one process do not mix their counts.
 */
export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  // Process metrics, including event loop lag (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry });
  const limit = options.maxLabelValues ?? 500;
  const operation = boundedLabel(limit);
  const client = boundedLabel(limit);

  const requests = new Counter({
    name: 'petstore_requests_total',
    help: 'Requests answered, by operation (GraphQL operation name or REST route) and HTTP status.',
    labelNames: ['operation', 'status'] as const,
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: 'petstore_request_duration_seconds',
    help: 'Time to answer a request, by operation and HTTP status.',
    labelNames: ['operation', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const deprecatedUse = new Counter({
    name: 'petstore_deprecated_use_total',
    help: 'Uses of deprecated GraphQL fields and legacy REST routes, by what was used and by client, to plan the sunset.',
    labelNames: ['target', 'client'] as const,
    registers: [registry],
  });
  const deprecatedLastSeen = new Gauge({
    name: 'petstore_deprecated_last_seen_seconds',
    help: 'When each client last used each deprecated GraphQL field or legacy REST route (Unix time, seconds).',
    labelNames: ['target', 'client'] as const,
    registers: [registry],
  });
  const legacyRefusals = new Counter({
    name: 'petstore_legacy_refusals_total',
    help: 'Calls of the legacy lookup answered GONE, by surface, client and reason (brownout, or past the sunset).',
    labelNames: ['target', 'client', 'reason'] as const,
    registers: [registry],
  });
  type RequestLabels = { operation: string; status: number | string };

  return {
    registry,
    /** Every bounded cache's size, bounds and evictions (petstore_cache_*). */
    caches: createCacheMetrics(registry),
    requests: {
      inc: (labels: RequestLabels) => requests.inc({ ...labels, operation: operation(labels.operation) }),
    },
    requestDuration: {
      observe: (labels: RequestLabels, seconds: number) =>
        requestDuration.observe({ ...labels, operation: operation(labels.operation) }, seconds),
    },
    errors: new Counter({
      name: 'petstore_errors_total',
      help: 'Errors returned to clients, by error code.',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    deprecatedUse: {
      inc: (labels: { target: string; client: string }, uses = 1) => {
        const bounded = { ...labels, client: client(labels.client) };
        deprecatedUse.inc(bounded, uses);
        deprecatedLastSeen.set(bounded, Date.now() / 1000);
      },
    },
    legacyRefusals: {
      inc: (labels: { target: string; client: string; reason: string }) =>
        legacyRefusals.inc({ ...labels, client: client(labels.client) }),
    },
    executions: new Counter({
      name: 'petstore_graphql_executions_total',
      help: 'GraphQL operations executed (queries and mutations), by engine: plan (its query plan) or graphql-js.',
      labelNames: ['engine'] as const,
      registers: [registry],
    }),
    databaseReads: new Counter({
      name: 'petstore_db_reads_total',
      help: 'GraphQL queries and REST reads by the server they were sent to (primary or replica), when replicas are set.',
      labelNames: ['server'] as const,
      registers: [registry],
    }),
    statementsCancelled: new Counter({
      name: 'petstore_db_statements_cancelled_total',
      help: 'Statements cancelled in PostgreSQL because their request reached REQUEST_TIMEOUT_MS and was answered.',
      registers: [registry],
    }),
    openSubscriptions: new Gauge({
      name: 'petstore_open_subscriptions',
      help: 'GraphQL subscriptions open right now.',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Each replica's state (1 in rotation, else 0) and lag, read when Prometheus scrapes. */
export function watchReplicas(metrics: Metrics, replicas: { status(): ReplicaStatus[] }) {
  new Gauge({
    name: 'petstore_db_replica_in_rotation',
    help: 'Whether a read replica takes reads (1) or is out of rotation (0: starting, lagging, unreachable, not a replica).',
    labelNames: ['replica'] as const,
    registers: [metrics.registry],
    collect() {
      for (const replica of replicas.status()) this.set({ replica: replica.name }, replica.state === 'in rotation' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'petstore_db_replica_lag_seconds',
    help: 'How far a read replica was behind the primary at its last check (absent while unknown).',
    labelNames: ['replica'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const replica of replicas.status()) {
        if (replica.lagSeconds !== null) this.set({ replica: replica.name }, replica.lagSeconds);
      }
    },
  });
}

/** Database pool use, read when Prometheus scrapes. */
export function watchPool(metrics: Metrics, pool: { totalCount: number; idleCount: number; waitingCount: number }) {
  new Gauge({
    name: 'petstore_db_pool_connections',
    help: 'Database pool connections by state (total, idle, waiting clients).',
    labelNames: ['state'] as const,
    registers: [metrics.registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}

/**
 * The databases' metrics: the primary pool's use, the replicas' state and lag (with replicas), and
 * the bounds of what grows with the statements sent (their names, the texts of the gateway's own,
 * and Prisma's plans, whose count Prisma does not tell: only its bound is shown).
 */
export function watchDatabases(metrics: Metrics, databases: Databases, prismaQueryPlansMax: number) {
  watchPool(metrics, databases.primary.pool);
  if (databases.readRouting.enabled) watchReplicas(metrics, databases.readRouting);
  const names = databases.statementNames;
  metrics.caches.watch('prepared_statement_names', { bounds: { maxEntries: names.max }, entries: () => names.size });
  const templates = databases.statementTemplates;
  metrics.caches.watch('statement_templates', { bounds: { maxEntries: templates.max }, entries: () => templates.size });
  templates.onEvict = () => metrics.caches.evicted('statement_templates', 'evict');
  metrics.caches.watch('prisma_query_plans', { bounds: { maxEntries: prismaQueryPlansMax }, entries: () => undefined });
}
