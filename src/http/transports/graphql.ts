import type { Context } from 'hono';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { GatewaySettings } from '../../config.js';
import { boundedCache } from '../../observability/caches.js';
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
import { useDeprecationNotice } from '../plugins/use-deprecation-notice.js';
import { useErrorMasking } from '../plugins/use-error-masking.js';
import { useGraphiQL } from '../plugins/use-graphiql.js';
import { useIncrementalDelivery } from '../plugins/use-incremental-delivery.js';
import { useOperationObserver } from '../plugins/use-operation-observer.js';
import { useOperationSpans } from '../plugins/use-operation-spans.js';
import { useReadRouting } from '../plugins/use-read-routing.js';
import { useRequestChecks } from '../plugins/use-request-checks.js';
import { useQueryLimits } from '../plugins/use-query-limits.js';
import { useRequestCaches } from '../plugins/use-request-caches.js';
import { useRequestDeadline } from '../plugins/use-request-deadline.js';
import { answerWithCache } from '../response-cache/serve.js';
import type { ResponseCache } from '../response-cache/store.js';
import { mayBeCached, useResponseCache } from '../response-cache/use-response-cache.js';
import { useWriteTags, type WriteListeners } from '../dependency-tags/use-write-tags.js';
import type { LiveQueries } from '../live-queries/store.js';
import { isLiveOperation, useLiveQueries } from '../live-queries/use-live-queries.js';
import { AnswerResponse, passOn } from '../answer.js';
import type { CostBudget } from '../demand/budget.js';
import type { DemandControl } from '../demand/control.js';
import type { QueryPlans } from '../query-plans/plans.js';
import { useQueryPlans } from '../query-plans/use-query-plans.js';
import { useRoundedIdRefusal } from '../plugins/use-rounded-id-refusal.js';
import { useSubscriptionTokenExpiry } from '../plugins/use-subscription-token-expiry.js';
import { type TrustedDocumentsOptions, usePersistedQueriesUnsupported, useTrustedDocuments } from '../plugins/use-trusted-documents.js';
import { useDemandControl } from '../plugins/use-demand-control.js';
import { createValidationCache } from '../plugins/use-validation-cache.js';
import { refusal } from '../refusal.js';
import { GRAPHQL_PATH } from '../routes.js';
import { createGraphQLServer, type GraphQLServer } from './yoga-server.js';
import type { GatewayEnv, RequestContext } from '../types.js';

export interface GraphQLOptions {
  settings: GatewaySettings;
  /** The schema as served (servedSchema); built from `legacy` when absent. */
  schema?: GraphQLSchema;
  prisma: PrismaClient;
  /** Queries on replicas, writes on the primary (DATABASE_REPLICA_URLS); all on the primary when absent. */
  readRouting?: ReadRouting;
  /** Single-row reads gathered across concurrent requests. */
  lookups: Lookups;
  events: EventBus;
  metrics: Metrics;
  logger: Logger;
  legacy: LegacyPolicy;
  /** Query answers kept per scope set until a write they depend on (createResponseCache); off when absent. */
  responseCache?: ResponseCache;
  databaseOutage?: Pick<OutageLog, 'failed'>;
  /** Which documents are run (TRUSTED_DOCUMENTS); any when absent. */
  trustedDocuments?: TrustedDocumentsOptions;
  /** Query plans (GRAPHQL_QUERY_PLANS): the executor of every operation that has one, graphql-js the rest's. */
  plans?: QueryPlans;
  /** The cost limit and budgets (src/http/demand/). */
  demand: DemandControl;
  /** Queries marked @live, kept fresh by the writes that touch them; @live is answered once when absent. */
  liveQueries?: LiveQueries;
}

export type GraphQLHandler = GraphQLServer;

/** What a parsed document keeps, estimated from its text: about 80 bytes of syntax tree per character. */
const PARSED_BYTES_PER_CHARACTER = 80;

/**
 * Told what each write changed (its dependency tags), before it answers; and whether anything reads the tags
 * now: this instance's response cache, its open live queries, or the other instances (with Redis).
 */
function writeListenersOf(options: Pick<GraphQLOptions, 'responseCache' | 'events' | 'liveQueries'>): WriteListeners {
  const { responseCache, liveQueries, events } = options;
  return {
    listeners: [
      ...(responseCache ? [responseCache.versions.stamp] : []),
      // Every instance hears every write, whether or not this one serves live queries.
      (tags: ReadonlySet<string>) => events.writes.publish([...tags]),
    ],
    read: () => responseCache !== undefined || events.writes.reachOtherInstances || (liveQueries?.size ?? 0) > 0,
  };
}

/** GraphQL over HTTP and SSE (yoga), with the gateway's plugins; WebSocket reuses the same pipeline. */
export function createGraphQLHandler(options: GraphQLOptions): GraphQLHandler {
  const { settings } = options;
  const countError = (code: string) => options.metrics.errors.inc({ code });
  // Yoga's own parse and validation caches, bounded by bytes too (its default is 1,024 documents of any
  // size). Validation results, and every plugin's facts about a document, are kept in weak maps keyed by
  // the parsed document, so they go when it goes from here; its cost estimates, in a bounded cache of
  // their own, are dropped when it goes.
  const documentBounds = settings.documentCache;
  const sizeOfText = (_value: unknown, text: string) => text.length * PARSED_BYTES_PER_CHARACTER;
  const parserAndValidationCache = {
    documentCache: boundedCache<string, DocumentNode>('graphql_documents', documentBounds, options.metrics.caches, {
      sizeOf: sizeOfText,
      onDispose: (document) => options.demand.analysis.forget(document),
    }),
    errorCache: boundedCache<string, Error>('graphql_parse_errors', documentBounds, options.metrics.caches, { sizeOf: sizeOfText }),
    // Per document instead (use-validation-cache.ts).
    validationCache: false,
  };
  const validation = createValidationCache();
  const writeListeners = writeListenersOf(options);
  // Queries whose answers must never be behind a write: those the response cache may keep, and live ones.
  const onPrimary = (document: DocumentNode, operationName?: string | null) =>
    (options.liveQueries !== undefined && isLiveOperation({ document, operationName })) ||
    (options.responseCache !== undefined && mayBeCached(document, operationName));
  return createGraphQLServer({
    parserAndValidationCache,
    schema: options.schema ?? servedSchema(options.legacy, { federation: settings.federation }),
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
    // Node's own Fetch API, not yoga's ponyfill, but for answers given whole (AnswerResponse).
    fetchAPI: { Request, Response: AnswerResponse, Headers, ReadableStream, TextEncoder, TextDecoder },
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
    batching: { limit: settings.limits.maxBatch },
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
        introspection: settings.introspection,
        countError,
        databaseOutage: options.databaseOutage,
      }),
      // After useErrorMasking: the spans carry the codes it gives errors.
      ...(settings.tracing.enabled ? [useOperationSpans({ resolvers: settings.tracing.resolverSpans })] : []),
      useRequestChecks({ maxBatch: settings.limits.maxBatch }),
      options.trustedDocuments
        ? useTrustedDocuments({ ...options.trustedDocuments, caches: options.metrics.caches })
        : usePersistedQueriesUnsupported(),
      // @defer and @stream, answered incrementally over multipart/mixed and SSE.
      validation.firstOnly(useIncrementalDelivery()),
      validation.firstOnly(useQueryLimits(settings.limits, settings.introspection)),
      useDemandControl(options.demand),
      useRoundedIdRefusal(),
      useSubscriptionTokenExpiry(),
      useRequestDeadline(),
      useOperationObserver(options.metrics),
      useDeprecationNotice(options.legacy),
      ...(options.readRouting?.enabled
        ? [useReadRouting(options.readRouting, { onPrimary })]
        : []),
      useWriteTags(writeListeners),
      ...(options.responseCache ? [useResponseCache()] : []),
      // Whichever engine executes: Pothos' caches of the request are let go when its execution ends.
      useRequestCaches(),
      // The executor: after every plugin that acts around execution, so each acts around the plan as around graphql-js.
      useQueryPlans(options.plans, { countExecution: (engine) => options.metrics.executions.inc({ engine }), traced: settings.tracing.enabled }),
      // After every plugin that chooses the executor: a live query runs the one they chose, again and again.
      ...(options.liveQueries
        ? [validation.firstOnly(useLiveQueries(options.liveQueries, { requestTimeoutMs: settings.limits.requestTimeoutMs, demand: options.demand }))]
        : []),
      // After every plugin that adds rules or rewords errors: it keeps the results they give.
      validation.plugin,
      // Off, it still tells a browser why it gets no page.
      useGraphiQL(GRAPHQL_PATH, { title: 'Petstore GraphQL gateway' }, settings.graphiql),
    ],
  }, options.logger);
}

/**
 * The hono handler of /graphql: yoga, behind the response cache when it is on, whose answers spend
 * `budget` as executed ones do.
 */
export function serveGraphQL(yoga: GraphQLHandler, cache?: ResponseCache, budget?: CostBudget) {
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
    const serverContext: RequestContext = {
      requestId: c.get('requestId'),
      principal: c.get('principal'),
      trace: c.get('trace'),
      deadline: c.get('deadline'),
      readAfter: c.get('readAfter'),
      demand: c.get('demand'),
      connection: c.env.incoming?.socket,
    };
    if (cache && (c.req.method === 'GET' || c.req.method === 'POST')) return answerWithCache(c, yoga, cache, serverContext, budget);
    return passOn(c, await yoga.handle(c.req.raw, serverContext));
  };
}

