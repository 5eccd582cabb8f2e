import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { PrismaClient } from './db.js';
import { errorBody } from './errors.js';
import { createGraphQLHandler } from './http/graphql.js';
import type { Logger } from './logger.js';

export interface GatewayOptions {
  prisma: PrismaClient;
  logger: Logger;
  graphiql: boolean;
  legacySunsetDate: string;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Composes the gateway: GraphQL at /graphql, and the spec's Error body for everything else. */
export function createGateway(options: GatewayOptions) {
  const graphql = createGraphQLHandler(options);
  const app = new Hono<{ Variables: { requestId: string } }>();

  app.use(async (c, next) => {
    const given = c.req.header('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    c.set('requestId', requestId);
    c.header('X-Request-Id', requestId);
    await next();
  });

  app.all('/graphql', (c) => graphql.fetch(c.req.raw, { requestId: c.get('requestId') }));

  app.notFound((c) =>
    c.json({ code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}.`, status: 404 }, 404),
  );
  app.onError((error, c) => {
    options.logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error');
    const body = errorBody(error);
    return c.json(body, body.status as 500);
  });

  return { app, graphql };
}
