import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The gateway's Prometheus metrics (prom-client), one registry per gateway so
 * that tests running several gateways in one process do not mix their counts.
 */
export function createMetrics() {
  const registry = new Registry();
  // Process metrics, including event loop lag (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry });

  return {
    registry,
    requests: new Counter({
      name: 'petstore_requests_total',
      help: 'Requests answered, by operation (GraphQL operation name or REST route) and HTTP status.',
      labelNames: ['operation', 'status'] as const,
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'petstore_request_duration_seconds',
      help: 'Time to answer a request, by operation and HTTP status.',
      labelNames: ['operation', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'petstore_errors_total',
      help: 'Errors returned to clients, by error code.',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    deprecatedUse: new Counter({
      name: 'petstore_deprecated_use_total',
      help: 'Uses of deprecated GraphQL fields and legacy REST routes, by what was used and by client, to plan the sunset.',
      labelNames: ['target', 'client'] as const,
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
