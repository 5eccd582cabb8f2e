import { randomUUID } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Redis } from 'ioredis';
import type { TokenVerifier } from './auth/tokens.js';
import type { Limits } from './config.js';
import type { PrismaClient } from './db.js';
import { errorBody } from './errors.js';
import { createGraphQLHandler } from './http/graphql.js';
import { authenticate, type GuardedEnv, limitBody, limitDuration } from './http/guards.js';
import { rateLimit } from './http/rate-limit.js';
import { createRestRouter } from './http/rest.js';
import type { LegacyAfterSunset } from './legacy.js';
import type { Logger } from './logger.js';

export interface GatewayOptions {
  prisma: PrismaClient;
  logger: Logger;
  verifyToken: TokenVerifier;
  limits: Limits;
  /** Shares rate limits between instances when given. */
  redis?: Redis;
  graphiql: boolean;
  introspection: boolean;
  corsOrigins: string[];
  legacySunsetDate: string;
  legacyAfterSunset: LegacyAfterSunset;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Composes the gateway. Every request passes the same guards in this order:
 * request id, CORS, body size, authentication, rate limit, time limit; then
 * GraphQL at /graphql or the REST compatibility routes, and the spec's Error
 * body for anything else.
 */
export function createGateway(options: GatewayOptions) {
  const graphql = createGraphQLHandler(options);
  const app = new Hono<GuardedEnv>();

  app.use(async (c, next) => {
    const given = c.req.header('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    c.set('requestId', requestId);
    await next();
    // Set on the final response: handlers such as yoga return their own Response object.
    c.res.headers.set('X-Request-Id', requestId);
  });
  if (options.corsOrigins.length > 0) {
    app.use(cors({ origin: options.corsOrigins, exposeHeaders: ['X-Request-Id', 'RateLimit', 'RateLimit-Policy'] }));
  }
  app.use(limitBody(options.limits.bodyBytes));
  app.use(authenticate(options.verifyToken));
  app.use(
    rateLimit({
      points: options.limits.rateLimit.requests,
      windowSeconds: options.limits.rateLimit.windowSeconds,
      redis: options.redis,
      clientOf: (c) => {
        const subject = c.get('principal').subject;
        return subject ? `sub:${subject}` : `ip:${getConnInfo(c).remote.address ?? 'unknown'}`;
      },
    }),
  );
  app.use(limitDuration(options.limits.requestTimeoutMs));

  app.all('/graphql', (c) =>
    graphql.fetch(c.req.raw, { requestId: c.get('requestId'), principal: c.get('principal') }),
  );
  app.route('/', createRestRouter(options));

  app.notFound((c) =>
    c.json({ code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}.`, status: 404 }, 404),
  );
  app.onError((error, c) => {
    const body = errorBody(error);
    if (body.status >= 500) options.logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    return c.json(body, body.status as 500);
  });

  return { app, graphql };
}
