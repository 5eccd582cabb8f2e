import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import type { PrismaClient } from '../../database/client.js';
import type { ReplicaStatus } from '../../database/replicas.js';
import type { EventBus } from '../../events/bus.js';
import { checkReadiness } from '../../observability/health.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RedisHealth } from '../../observability/redis-health.js';
import { bearerToken } from '../request.js';
import type { GatewayEnv } from '../types.js';

/**
 * The endpoints for probes and Prometheus: outside authentication and rate
 * limits. /metrics is served here unless it has a port of its own
 * (METRICS_PORT), and asks for METRICS_TOKEN as a bearer token when one is set.
 */

export interface OperationsOptions {
  prisma: PrismaClient;
  events: EventBus;
  metrics: Metrics;
  /** False once shutdown has begun: /readyz then answers 503 so load balancers stop sending traffic. */
  isAccepting: () => boolean;
  /** Whether Redis answers; while it does not, /readyz answers 200 `degraded` naming what is lost. */
  redisHealth?: Pick<RedisHealth, 'status' | 'lost'>;
  /** The read replicas: /readyz lists each with its state and lag, and says `degraded` while one is out of rotation. */
  readRouting?: { status(): ReplicaStatus[] };
  /** Serve /metrics on this router (false when it has a port of its own). */
  serveMetrics: boolean;
  metricsToken?: string;
}

export function operationsRoutes(options: OperationsOptions) {
  const routes = new Hono<GatewayEnv>();
  routes.get('/healthz', (c) => c.json({ status: 'ok' }));
  routes.get('/readyz', async (c) => {
    const readiness = options.isAccepting()
      ? await checkReadiness(options.prisma)
      : { ready: false as const, reason: 'Shutting down.' };
    const replicas = options.readRouting?.status() ?? [];
    const shown = replicas.length > 0 ? { replicas } : {};
    if (!readiness.ready) return c.json({ status: 'not ready', reason: readiness.reason, ...shown }, 503);
    // Serving, without what Redis shares or with fewer replicas (the primary takes their reads):
    // ready for traffic, and says so.
    const degraded = {
      ...(options.redisHealth?.status === 'degraded' ? { redis: options.redisHealth.lost } : {}),
      ...(replicas.some((replica) => replica.state !== 'in rotation')
        ? {
            replicas: replicas
              .filter((replica) => replica.state !== 'in rotation')
              .map((replica) => `${replica.name} is ${replica.state}: its reads go to the primary`),
          }
        : {}),
    };
    if (Object.keys(degraded).length > 0) return c.json({ status: 'degraded', degraded, ...shown });
    return c.json({ status: 'ready', ...shown });
  });
  if (options.serveMetrics) routes.get('/metrics', metricsHandler(options));
  return routes;
}

/** /metrics alone, for its own port. */
export function metricsRoutes(options: Pick<OperationsOptions, 'events' | 'metrics' | 'metricsToken'>) {
  return new Hono().get('/metrics', metricsHandler(options));
}

function metricsHandler({ events, metrics, metricsToken }: Pick<OperationsOptions, 'events' | 'metrics' | 'metricsToken'>) {
  const expected = metricsToken === undefined ? undefined : Buffer.from(metricsToken);
  return async (c: Context) => {
    if (expected && !sameSecret(bearerToken(c.req.header('authorization') ?? ''), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="metrics"');
      return c.json({ code: 'UNAUTHENTICATED', message: '/metrics needs the bearer token METRICS_TOKEN.', status: 401 }, 401);
    }
    metrics.openSubscriptions.set(events.openSubscriptions);
    return c.text(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
  };
}

function sameSecret(given: string | undefined, expected: Buffer): boolean {
  if (given === undefined) return false;
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
