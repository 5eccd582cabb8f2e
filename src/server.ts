import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { getConnInfo } from '@hono/node-server/conninfo';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { cors } from 'hono/cors';
import type { Redis } from 'ioredis';
import type { TokenVerifier } from './auth/tokens.js';
import type { Limits, ResponseCacheSettings } from './config.js';
import type { PrismaClient } from './db.js';
import type { EventBus } from './events/bus.js';
import { errorBody } from './errors.js';
import { createGraphQLHandler } from './http/graphql.js';
import { type AuthenticatedEnv, authenticate, limitBody, limitDuration, refuseInvalidTokens } from './http/guards.js';
import { createRateLimiter, rateLimitClient } from './http/rate-limit.js';
import { createRestRouter } from './http/rest.js';
import { serveGraphQLOverWebSocket } from './http/websocket.js';
import { checkReadiness } from './observability/health.js';
import { errorCodeOf, type Metrics } from './observability/metrics.js';
import type { LegacyAfterSunset } from './legacy.js';
import type { Logger } from './logger.js';

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
  legacySunsetDate: string;
  legacyAfterSunset: LegacyAfterSunset;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Answers yoga writes whole (a JSON result); streamed ones (SSE, multipart) are passed on as they are. */
const WHOLE_ANSWER = /^application\/(graphql-response\+)?json\b/;

/**
 * Yoga's answer as a hono body: its JSON text, status and headers. A string
 * body goes out with one write (node-server's fast path, which the headers the
 * middlewares add after the handler keep), where yoga's own Response object
 * would be read back through a web stream.
 */
async function whole(c: Context, response: Response): Promise<Response> {
  if (!WHOLE_ANSWER.test(response.headers.get('content-type') ?? '')) return response;
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return c.body(await response.text(), response.status as ContentfulStatusCode, headers);
}

/**
 * Composes the gateway. Every request passes the same guards in this order:
 * request id, CORS, body size, authentication, rate limit (which also counts
 * requests whose token is refused), refusal of bad tokens, time limit; then
 * GraphQL at /graphql or the REST compatibility routes, and the spec's Error
 * body for anything else.
 */
export function createGateway(options: GatewayOptions) {
  const { logger, metrics } = options;
  const graphql = createGraphQLHandler(options);
  const rateLimiter = createRateLimiter({
    points: options.limits.rateLimit.requests,
    windowSeconds: options.limits.rateLimit.windowSeconds,
    redis: options.redis,
    keyPrefix: options.limits.rateLimit.keyPrefix,
  });
  const app = new Hono<AuthenticatedEnv & { Variables: { trace: { operation?: string } } }>();
  let accepting = true;

  app.use(async (c, next) => {
    const startedAt = performance.now();
    const given = c.req.header('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    c.set('requestId', requestId);
    const trace: { operation?: string } = {};
    c.set('trace', trace);
    await next();
    // Set on the final response: handlers such as yoga return their own Response object.
    c.res.headers.set('X-Request-Id', requestId);
    // Shutting down: the client must not send another request on this connection.
    if (!accepting) c.res.headers.set('Connection', 'close');
    const status = c.res.status;
    const operation = trace.operation ?? `${c.req.method} ${c.req.routePath}`;
    const seconds = (performance.now() - startedAt) / 1000;
    metrics.requests.inc({ operation, status });
    metrics.requestDuration.observe({ operation, status }, seconds);
    // GraphQL errors are counted as yoga sends them; here the spec's Error bodies (REST, guards, 404).
    const code = await errorCodeOf(c.res);
    if (code) metrics.errors.inc({ code });
    if (c.req.routePath === '/pets/:petId' && (c.req.method === 'GET' || c.req.method === 'HEAD')) {
      metrics.deprecatedUse.inc({ target: 'GET /pets/{petId}', client: c.get('principal')?.subject ?? 'anonymous' });
    }
    // One line per request; no headers, tokens or bodies.
    logger.info(
      { requestId, method: c.req.method, path: c.req.path, operation, status, durationMs: Math.round(seconds * 1000) },
      'request',
    );
  });

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

  app.all('/graphql', async (c) => {
    const response = await graphql.fetch(c.req.raw, {
      requestId: c.get('requestId'),
      principal: c.get('principal'),
      trace: c.get('trace'),
    });
    return whole(c, response);
  });
  app.route('/', createRestRouter(options));

  app.notFound((c) =>
    c.json(
      { code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}.`, status: 404, requestId: c.get('requestId') },
      404,
    ),
  );
  app.onError((error, c) => {
    const body = errorBody(error, c.get('requestId'));
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
