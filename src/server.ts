import type { Server } from 'node:http';
import { type Context, Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Redis } from 'ioredis';
import type { TokenVerifier } from './auth/tokens.js';
import type { GatewaySettings } from './config.js';
import type { PrismaClient } from './database/client.js';
import type { ReadRouting } from './database/replicas.js';
import { createLookups } from './domain/lookups.js';
import type { EventBus } from './events/bus.js';
import { legacyPolicy } from './legacy.js';
import type { Logger } from './logger.js';
import { authenticate, refuseInvalidTokens } from './http/middleware/authenticate.js';
import { limitBody } from './http/middleware/body-limit.js';
import { closeConnectionsWhenStopping } from './http/middleware/drain.js';
import { observeRequests } from './http/middleware/observe-requests.js';
import { createRateLimiter, rateLimitClient } from './http/middleware/rate-limit.js';
import { createCostBudget } from './http/demand/budget.js';
import { createDemandControl } from './http/demand/control.js';
import { readAfterPosition } from './http/middleware/read-after.js';
import { limitDuration } from './http/middleware/time-limit.js';
import { errorBody, notFound } from './errors.js';
import { errorAnswer } from './http/refusal.js';
import { clientAddress } from './http/request.js';
import { GRAPHQL_PATH, OPENAPI_PATH } from './http/routes.js';
import { createResponseCache } from './http/response-cache/store.js';
import { createLiveQueries } from './http/live-queries/store.js';
import { createQueryPlans } from './http/query-plans/plans.js';
import { createGraphQLHandler, serveGraphQL } from './http/transports/graphql.js';
import { servedSchema } from './schema/index.js';
import { metricsRoutes, operationsRoutes } from './http/transports/operations.js';
import { createRestRouter } from './http/transports/rest.js';
import { serveGraphQLOverWebSocket } from './http/transports/websocket.js';
import type { TrustedDocumentsOptions } from './http/plugins/use-trusted-documents.js';
import type { GatewayEnv } from './http/types.js';
import type { Metrics } from './observability/metrics.js';
import type { OutageLog } from './observability/outages.js';
import type { RedisHealth } from './observability/redis-health.js';
import { currentTraceId } from './observability/tracing/spans.js';

/**
 * Clients an instance keeps in process: their cost budgets (without Redis, or while it is away;
 * the least recently seen go first, full again) and their shares of the rate limit (with Redis).
 */
const CLIENTS_KEPT = 100_000;

export interface GatewayOptions {
  /** What the settings say (src/config.ts); tests build them from the defaults too. */
  settings: GatewaySettings;
  prisma: PrismaClient;
  /** Reads on streaming replicas with read-your-writes (DATABASE_REPLICA_URLS); all on `prisma` when absent. */
  readRouting?: ReadRouting;
  logger: Logger;
  events: EventBus;
  metrics: Metrics;
  verifyToken: TokenVerifier;
  /** Shares rate limits (and the response cache's write log) between instances when given. */
  redis?: Redis;
  /** Logs a database outage once (its start and its end) rather than per failed request. */
  databaseOutage?: OutageLog;
  /** Whether Redis answers: /readyz says `degraded` (still 200) while it does not. */
  redisHealth?: RedisHealth;
}

/**
 * Composes the gateway. Every request passes the same middleware in this
 * order: request id and log line, CORS, time limit, body size,
 * authentication, rate limit (which also counts requests whose token is
 * refused), refusal of bad tokens, the Read-After position; then GraphQL at /graphql or the REST
 * compatibility routes, and the spec's Error body for anything else.
 */
export function createGateway(options: GatewayOptions) {
  const { logger, metrics, settings } = options;
  const legacy = legacyPolicy(settings.legacy, { successor: GRAPHQL_PATH, policy: OPENAPI_PATH }, (refusal) => {
    metrics.legacyRefusals.inc({ target: refusal.target, client: refusal.client, reason: refusal.reason });
    logger.warn(
      { target: refusal.target, client: refusal.client, requestId: refusal.requestId, reason: refusal.reason, until: refusal.until },
      refusal.reason === 'brownout' ? 'legacy lookup refused: brownout' : 'legacy lookup refused: past its sunset',
    );
  });
  // One per gateway: reads of single rows by id from concurrent requests become one statement.
  const lookups = createLookups();
  const responseCache = settings.responseCache
    ? createResponseCache({ ...settings.responseCache, redis: options.redis, logger, metrics })
    : undefined;
  const liveQueries = settings.liveQueries
    ? createLiveQueries({ settings: settings.liveQueries, writes: options.events.writes, registry: metrics.registry })
    : undefined;
  const trustedDocuments: TrustedDocumentsOptions | undefined =
    settings.trustedDocuments.mode === 'off'
      ? undefined
      : { mode: settings.trustedDocuments.mode, documents: settings.trustedDocuments.documents, registered: settings.persistedQueries };
  // One schema object for yoga and demand control: per-document facts are kept per schema.
  const schema = servedSchema(legacy, { federation: settings.federation });
  const { limits } = settings;
  const budget = createCostBudget({
    settings: limits.costBudget,
    redis: options.redis,
    keyPrefix: `${limits.rateLimit.keyPrefix ?? 'petstore-rate'}:cost`,
    logger,
    maxClients: CLIENTS_KEPT,
    caches: metrics.caches,
  });
  const demand = createDemandControl({
    schema,
    maxCost: limits.maxCost,
    budget,
    unsizedList: limits.unsizedList,
    bounds: { maxEntries: limits.costEstimates },
    caches: metrics.caches,
  });
  const plans = settings.queryPlans
    ? createQueryPlans({ bounds: settings.queryPlans, ownStatements: settings.queryPlans.ownStatements, caches: metrics.caches })
    : undefined;
  const graphql = createGraphQLHandler({ ...options, schema, legacy, lookups, responseCache, trustedDocuments, plans, demand, liveQueries });
  const rateLimiter = createRateLimiter({
    points: settings.limits.rateLimit.requests,
    windowSeconds: settings.limits.rateLimit.windowSeconds,
    redis: options.redis,
    keyPrefix: settings.limits.rateLimit.keyPrefix,
    budget,
    maxClients: CLIENTS_KEPT,
    caches: metrics.caches,
  });
  const addressOf = clientAddress(settings.trustProxy);
  // Who is asking, as the rate limit counts clients (budgets and live queries' limits go by the same).
  const clientOf = (c: Context<GatewayEnv>) => rateLimitClient(c.get('principal'), addressOf(c.env.incoming));
  // /metrics on a port of its own (METRICS_PORT) is not served on the API's.
  const metricsToken = settings.metrics.token;
  const app = new Hono<GatewayEnv>();
  let accepting = true;

  app.use(observeRequests({ logger, metrics }));
  app.use(closeConnectionsWhenStopping(() => !accepting));

  app.route(
    '/',
    operationsRoutes({
      ...options,
      isAccepting: () => accepting,
      serveMetrics: settings.metrics.port === undefined,
      metricsToken,
    }),
  );
  if (settings.corsOrigins.length > 0) {
    // CORS_ORIGINS=* allows any origin; hono takes that as the string '*', not as a list holding it.
    const origin = settings.corsOrigins.includes('*') ? '*' : settings.corsOrigins;
    app.use(cors({ origin, exposeHeaders: ['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Write-Position'] }));
  }
  // The time limit covers the whole request, the guards too: the identity provider's keys and
  // the shared rate limit are calls to other services.
  app.use(limitDuration(settings.limits.requestTimeoutMs));
  app.use(limitBody(settings.limits.bodyBytes));
  app.use(authenticate(options.verifyToken));
  app.use(rateLimiter.middleware(clientOf));
  app.use(refuseInvalidTokens());
  app.use(readAfterPosition());

  app.all(GRAPHQL_PATH, serveGraphQL(graphql, responseCache, budget));
  app.route('/', createRestRouter({ ...options, legacy, lookups, budget }));

  app.notFound((c) => {
    c.get('trace').errorCode = 'NOT_FOUND';
    return c.json(errorBody(notFound(`No route for ${c.req.method} ${c.req.path}.`), { requestId: c.get('requestId'), traceId: currentTraceId() }), 404);
  });
  app.onError((error, c) => errorAnswer(c, error, options));

  return {
    app,
    graphql,
    /** Serves GraphQL over WebSocket on the given HTTP server, on the same path. */
    serveWebSockets: (server: Server) =>
      serveGraphQLOverWebSocket(server, graphql, {
        verifyToken: options.verifyToken,
        logger,
        maxMessageBytes: settings.limits.bodyBytes,
        clientOf: (principal, request) => rateLimitClient(principal, addressOf(request)),
        refuseOverLimit: (principal, request) => rateLimiter.refusalFor(rateLimitClient(principal, addressOf(request))),
        trustedDocuments,
      }),
    /** /metrics alone, for METRICS_PORT. */
    metricsApp: metricsRoutes({ ...options, metricsToken }),
    /** For shutdown, before the event bus closes: every live query completes, over SSE and WebSocket alike. */
    endLiveQueries: () => liveQueries?.endAll(),
    /** From now on /readyz answers 503, so load balancers stop sending traffic. */
    stopAccepting: () => {
      accepting = false;
    },
  };
}
