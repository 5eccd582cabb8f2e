import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Redis } from 'ioredis';
import type { GraphQLContext } from '../../builder.js';
import type { Limits, ResponseCacheSettings } from '../../config.js';
import type { PrismaClient } from '../../database/client.js';
import type { ReadRouting } from '../../database/replicas.js';
import type { Lookups } from '../../domain/lookups.js';
import type { EventBus } from '../../events/bus.js';
import type { LegacyPolicy } from '../../legacy.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { OutageLog } from '../../observability/outages.js';
import { DomainError } from '../../errors.js';
import { servedSchema } from '../../schema/index.js';
import { useCompiledExecution } from '../plugins/use-compiled-execution.js';
import { useDeprecationNotice } from '../plugins/use-deprecation-notice.js';
import { useErrorMasking } from '../plugins/use-error-masking.js';
import { useGraphiQL } from '../plugins/use-graphiql.js';
import { useOperationObserver } from '../plugins/use-operation-observer.js';
import { useReadRouting } from '../plugins/use-read-routing.js';
import { useQueryLimits } from '../plugins/use-query-limits.js';
import { useRequestDeadline } from '../plugins/use-request-deadline.js';
import { isAnonymous, useAnonymousResponseCache } from '../plugins/use-response-cache.js';
import { useRoundedIdRefusal } from '../plugins/use-rounded-id-refusal.js';
import { useSubscriptionTokenExpiry } from '../plugins/use-subscription-token-expiry.js';
import { type TrustedDocumentsOptions, useTrustedDocuments } from '../plugins/use-trusted-documents.js';
import { useVariablePageCost } from '../plugins/use-variable-page-cost.js';
import { refusal } from '../refusal.js';
import { GRAPHQL_PATH } from '../routes.js';
import type { GatewayEnv, RequestContext } from '../types.js';

export interface GraphQLOptions {
  prisma: PrismaClient;
  /** Queries on replicas, writes on the primary (DATABASE_REPLICA_URLS); all on the primary when absent. */
  readRouting?: ReadRouting;
  /** Single-row reads gathered across concurrent requests. */
  lookups: Lookups;
  events: EventBus;
  metrics: Metrics;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
  limits: Limits;
  legacy: LegacyPolicy;
  /** Anonymous reads served from memory until a write or `ttlMs`; off when absent. */
  responseCache?: ResponseCacheSettings;
  /** Shares the response cache's write generation between instances when given. */
  redis?: Redis;
  databaseOutage?: Pick<OutageLog, 'failed'>;
  /** Compile documents seen `afterUses` times with graphql-jit; graphql-js for all when absent. */
  compiledExecution?: { afterUses: number };
  /** Which documents are run (TRUSTED_DOCUMENTS); any when absent. */
  trustedDocuments?: TrustedDocumentsOptions;
}

export type GraphQLHandler = YogaServerInstance<RequestContext, GraphQLContext>;

/** GraphQL over HTTP and SSE (yoga), with the gateway's plugins; WebSocket reuses the same instance. */
export function createGraphQLHandler(options: GraphQLOptions): GraphQLHandler {
  const countError = (code: string) => options.metrics.errors.inc({ code });
  return createYoga<RequestContext, GraphQLContext>({
    schema: servedSchema(options.legacy),
    graphqlEndpoint: GRAPHQL_PATH,
    context: ({ requestId, principal }) => ({
      prisma: options.prisma,
      lookups: options.lookups,
      requestId,
      principal,
      events: options.events.publisher,
      pubsub: options.events.pubsub,
      legacy: options.legacy,
    }),
    // Node's own Fetch API, not yoga's ponyfill: Hono re-wraps yoga's response in a native
    // Response, and a ponyfill stream body in there crashes the process (undici's
    // ReadableStreamFrom) when an SSE client goes away.
    fetchAPI: { Request, Response, Headers, ReadableStream, TextEncoder, TextDecoder },
    // Served by useGraphiQL, with its content security policy.
    graphiql: false,
    // CORS is the gateway's (the CORS_ORIGINS setting); yoga's own would let any origin in.
    cors: false,
    // No file uploads here: a multipart body is refused (415) rather than parsed.
    multipart: false,
    // useErrorMasking is the one seam for errors (see there why not yoga's maskError).
    maskedErrors: false,
    logging: options.logger,
    landingPage: false,
    batching: { limit: options.limits.maxBatch },
    // A trusted document is named by the GraphQL-over-HTTP draft's documentId parameter.
    ...(options.trustedDocuments ? { extraParamNames: ['documentId'] } : {}),
    // The HTTP layer refuses bodies over the limit before they reach yoga (limitBody), by
    // Content-Length or by counting a chunked body; yoga's own check would pipe every body
    // through one more stream.
    maxRequestBodySize: false,
    plugins: [
      // First: its execution hooks must also see results other plugins give instead of executing.
      useErrorMasking({
        logger: options.logger,
        introspection: options.introspection,
        countError,
        databaseOutage: options.databaseOutage,
      }),
      ...(options.trustedDocuments ? [useTrustedDocuments(options.trustedDocuments)] : []),
      // @defer and @stream, answered incrementally over multipart/mixed and SSE.
      useDeferStream(),
      useQueryLimits(options.limits, options.introspection),
      useVariablePageCost(options.limits.maxCost),
      useRoundedIdRefusal(),
      useSubscriptionTokenExpiry(),
      useRequestDeadline(),
      useOperationObserver(options.metrics),
      useDeprecationNotice(options.legacy),
      ...(options.readRouting?.enabled
        ? [useReadRouting(options.readRouting, { onPrimary: options.responseCache ? isAnonymous : undefined })]
        : []),
      // Before the response cache, which then wraps the compiled executor (after it, the cache was bypassed).
      ...(options.compiledExecution
        ? [
            useCompiledExecution({
              ...options.compiledExecution,
              countExecution: (engine) => options.metrics.executions.inc({ engine }),
            }),
          ]
        : []),
      ...(options.responseCache
        ? [
            useAnonymousResponseCache({
              ...options.responseCache,
              redis: options.redis,
              logger: options.logger,
              countLookup: (result) => options.metrics.responseCacheLookups.inc({ result }),
            }),
          ]
        : []),
      // Off, it still tells a browser why it gets no page.
      useGraphiQL(GRAPHQL_PATH, { title: 'Petstore GraphQL gateway' }, options.graphiql),
    ],
  });
}

/** Answers yoga writes whole (a JSON result); streamed ones (SSE, multipart) are passed on as they are. */
const WHOLE_ANSWER = /^application\/(graphql-response\+)?json\b/;

/**
 * The hono handler of /graphql. Yoga's whole answers go out as a hono string
 * body: one write (node-server's fast path, which the headers the middlewares
 * add after the handler keep), where yoga's own Response object would be read
 * back through a web stream.
 */
export function serveGraphQL(yoga: GraphQLHandler) {
  return async (c: Context<GatewayEnv>) => {
    if (c.req.method === 'PUT') {
      // What graphql-sse's single connection mode sends first, to reserve its stream: say so.
      c.header('Allow', 'GET, POST');
      return refusal(
        c,
        new DomainError(
          'METHOD_NOT_ALLOWED',
          'PUT is not served here: Server-Sent Events are served in graphql-sse\'s distinct connections mode only ' +
            '(one request per operation; createClient\'s default, singleConnection: false), not its single connection ' +
            'mode, which reserves a stream with PUT. /graphql answers GET and POST.',
        ),
      );
    }
    const response = await yoga.fetch(c.req.raw, {
      requestId: c.get('requestId'),
      principal: c.get('principal'),
      trace: c.get('trace'),
      deadline: c.get('deadline'),
      readAfter: c.get('readAfter'),
    });
    if (!WHOLE_ANSWER.test(response.headers.get('content-type') ?? '')) return response;
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return c.body(await response.text(), response.status as ContentfulStatusCode, headers);
  };
}
