import type { Server } from 'node:http';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Redis } from 'ioredis';
import type { TokenVerifier } from './auth/tokens.js';
import type { Limits, ResponseCacheSettings } from './config.js';
import type { PrismaClient } from './db.js';
import { errorBody } from './errors.js';
import type { EventBus } from './events/bus.js';
import { type LegacySettings, legacyPolicy } from './legacy.js';
import type { Logger } from './logger.js';
import { authenticate, refuseInvalidTokens } from './http/middleware/authenticate.js';
import { limitBody } from './http/middleware/body-limit.js';
import { closeConnectionsWhenStopping } from './http/middleware/drain.js';
import { observeRequests } from './http/middleware/observe-requests.js';
import { createRateLimiter, rateLimitClient } from './http/middleware/rate-limit.js';
import { limitDuration } from './http/middleware/time-limit.js';
import { GRAPHQL_PATH, OPENAPI_PATH } from './http/routes.js';
import { createGraphQLHandler, serveGraphQL } from './http/transports/graphql.js';
import { createRestRouter } from './http/transports/rest.js';
import { serveGraphQLOverWebSocket } from './http/transports/websocket.js';
import type { GatewayEnv } from './http/types.js';
import { checkReadiness } from './observability/health.js';
import type { Metrics } from './observability/metrics.js';

export interface GatewayOptions {
  prisma: PrismaClient;
  logger: Logger;
  events: EventBus;
  metrics: Metrics;
  verifyToken: TokenVerifier;
  limits: Limits;
  /** Shares rate limits (and the response cache's write generation) between instances when given. */
  redis?: Redis;
  /** Anonymous reads served from memory until a write or `ttlMs`; off when absent. */
  responseCache?: ResponseCacheSettings;
  graphiql: boolean;
  introspection: boolean;
  corsOrigins: string[];
  legacy: LegacySettings;
}

/**
 * Composes the gateway. Every request passes the same middleware in this
 * order: request id and log line, CORS, body size, authentication, rate limit
 * (which also counts requests whose token is refused), refusal of bad tokens,
 * time limit; then GraphQL at /graphql or the REST compatibility routes, and
 * the spec's Error body for anything else.
 */
export function createGateway(options: GatewayOptions) {
  const { logger, metrics } = options;
  const legacy = legacyPolicy(options.legacy, { successor: GRAPHQL_PATH, policy: OPENAPI_PATH }, (refusal) => {
    metrics.legacyRefusals.inc({ target: refusal.target, client: refusal.client, reason: refusal.reason });
    logger.warn(
      { target: refusal.target, client: refusal.client, requestId: refusal.requestId, reason: refusal.reason, until: refusal.until },
      refusal.reason === 'brownout' ? 'legacy lookup refused: brownout' : 'legacy lookup refused: past its sunset',
    );
  });
  const graphql = createGraphQLHandler({ ...options, legacy });
  const rateLimiter = createRateLimiter({
    points: options.limits.rateLimit.requests,
    windowSeconds: options.limits.rateLimit.windowSeconds,
    redis: options.redis,
    keyPrefix: options.limits.rateLimit.keyPrefix,
  });
  const app = new Hono<GatewayEnv>();
  let accepting = true;

  app.use(observeRequests({ logger, metrics }));
  app.use(closeConnectionsWhenStopping(() => !accepting));

  // Operations endpoints: outside authentication and rate limits, for probes and Prometheus.
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = accepting ? await checkReadiness(options.prisma) : { ready: false as const, reason: 'Shutting down.' };
    return readiness.ready ? c.json({ status: 'ready' }) : c.json({ status: 'not ready', reason: readiness.reason }, 503);
  });
  app.get('/metrics', async (c) => {
    metrics.openSubscriptions.set(options.events.openSubscriptions);
    return c.text(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType });
  });
  if (options.corsOrigins.length > 0) {
    // CORS_ORIGINS=* allows any origin; hono takes that as the string '*', not as a list holding it.
    const origin = options.corsOrigins.includes('*') ? '*' : options.corsOrigins;
    app.use(cors({ origin, exposeHeaders: ['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After'] }));
  }
  app.use(limitBody(options.limits.bodyBytes));
  app.use(authenticate(options.verifyToken));
  app.use(rateLimiter.middleware((c) => rateLimitClient(c.get('principal'), getConnInfo(c).remote.address)));
  app.use(refuseInvalidTokens());
  app.use(limitDuration(options.limits.requestTimeoutMs));

  app.all(GRAPHQL_PATH, serveGraphQL(graphql));
  app.route('/', createRestRouter({ ...options, legacy }));

  app.notFound((c) => {
    c.get('trace').errorCode = 'NOT_FOUND';
    return c.json(
      { code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}.`, status: 404, requestId: c.get('requestId') },
      404,
    );
  });
  app.onError((error, c) => {
    const body = errorBody(error, c.get('requestId'));
    c.get('trace').errorCode = body.code;
    if (body.status >= 500) logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    return c.json(body, body.status as 500);
  });

  return {
    app,
    graphql,
    /** Serves GraphQL over WebSocket on the given HTTP server, on the same path. */
    serveWebSockets: (server: Server) =>
      serveGraphQLOverWebSocket(server, graphql, {
        verifyToken: options.verifyToken,
        logger,
        maxMessageBytes: options.limits.bodyBytes,
        refuseOverLimit: (principal, address) => rateLimiter.refusalFor(rateLimitClient(principal, address)),
      }),
    /** From now on /readyz answers 503, so load balancers stop sending traffic. */
    stopAccepting: () => {
      accepting = false;
    },
  };
}
