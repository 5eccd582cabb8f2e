import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
  type DocumentNode,
  type ExecutionArgs,
  GraphQLError,
  GraphQLSchema,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
  specifiedDirectives,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import {
  createYoga,
  isAsyncIterable,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import type { Redis } from 'ioredis';
import type { Principal } from '../auth/scopes.js';
import type { GraphQLContext } from '../builder.js';
import type { Limits, ResponseCacheSettings } from '../config.js';
import type { PrismaClient } from '../db.js';
import { maskedInternalError, toDomainError, toGraphQLError } from '../errors.js';
import { DEFAULT_LEGACY_SUNSET_DATE, type LegacyAfterSunset } from '../legacy.js';
import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { schema as printedSchema } from '../schema/index.js';
import { legacyLookupDeprecation } from '../schema/pet.js';
import { securedGraphiQL } from './graphiql.js';
import { finalErrors } from './graphql-errors.js';
import { variablePageCost } from './query-cost.js';
import { responseCache } from './response-cache.js';
import { refuseRoundedIds } from './rounded-ids.js';
import { endSubscriptionsAtTokenExpiry } from './token-expiry.js';

/** What the HTTP layer hands every GraphQL request. */
export interface RequestContext {
  requestId: string;
  principal: Principal;
  /** Filled in while the request runs, for the request log and metrics. */
  trace?: { operation?: string };
}

export interface GraphQLOptions {
  prisma: PrismaClient;
  events: EventBus;
  metrics: Metrics;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
  limits: Limits;
  legacySunsetDate: string;
  legacyAfterSunset: LegacyAfterSunset;
  /** Anonymous reads served from memory until a write or `ttlMs`; off when absent. */
  responseCache?: ResponseCacheSettings;
  /** Shares the response cache's write generation between instances when given. */
  redis?: Redis;
}

/**
 * Query limits (graphql-armor), checked while the document is validated, so a
 * document over a limit is refused before any resolver runs. Field
 * suggestions ("did you mean …") are hidden whenever introspection is off.
 */
function queryLimits(limits: Limits, introspection: boolean) {
  return EnvelopArmorPlugin({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, flattenFragments: true },
    maxAliases: { n: limits.maxAliases, allowList: [] },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: limits.maxDirectives },
    costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true },
    blockFieldSuggestion: { enabled: !introspection },
  });
}

/**
 * Names the operation for the request log and metrics, and counts the use of
 * deprecated fields per client, so the sunset can be planned from facts.
 */
function observeOperations(metrics: Metrics): Plugin<GraphQLContext & RequestContext> {
  // What a document tells, worked out once per document and operation name: yoga's parse
  // cache hands every request with the same text the same DocumentNode.
  const seen = new WeakMap<DocumentNode, Map<string, ObservedOperation>>();
  const observeDocument = (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined) => {
    let byName = seen.get(document);
    if (!byName) {
      byName = new Map();
      seen.set(document, byName);
    }
    let observed = byName.get(operationName ?? '');
    if (!observed) {
      const operation = getOperationAST(document, operationName);
      const deprecated: string[] = [];
      const typeInfo = new TypeInfo(schema);
      visit(
        document,
        visitWithTypeInfo(typeInfo, {
          Field() {
            const field = typeInfo.getFieldDef();
            const parent = typeInfo.getParentType();
            if (field?.deprecationReason && parent) deprecated.push(`${parent.name}.${field.name}`);
          },
        }),
      );
      observed = { name: operation?.name?.value ?? operation?.operation ?? 'anonymous', deprecated };
      byName.set(operationName ?? '', observed);
    }
    return observed;
  };
  const observe = ({ args }: { args: ExecutionArgs }) => {
    const context = args.contextValue as GraphQLContext & RequestContext;
    const observed = observeDocument(args.schema, args.document, args.operationName ?? undefined);
    if (context.trace) context.trace.operation = observed.name;
    if (observed.deprecated.length === 0) return;
    const client = context.principal.subject ?? 'anonymous';
    for (const target of observed.deprecated) metrics.deprecatedUse.inc({ target, client });
  };
  return { onExecute: observe, onSubscribe: observe };
}

interface ObservedOperation {
  /** The operation's name, else its kind, else anonymous. */
  name: string;
  /** `Type.field` for each use of a deprecated field, as often as it is used. */
  deprecated: string[];
}

const noIntrospection: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
};

/**
 * graphql-js' own directives (@include, @skip, @deprecated, @specifiedBy,
 * @oneOf). A schema given a `directives` list of its own has only those, so
 * src/schema/index.ts (which lists @stability) left clients without @include
 * and @skip; they are added here when missing. (The fix belongs in
 * src/schema/index.ts: `directives: [...specifiedDirectives, stabilityDirective]`;
 * this is then a no-op.)
 */
function withSpecifiedDirectives(schema: GraphQLSchema): GraphQLSchema {
  const missing = specifiedDirectives.filter((directive) => !schema.getDirective(directive.name));
  if (missing.length === 0) return schema;
  const config = schema.toConfig();
  return new GraphQLSchema({ ...config, directives: [...missing, ...config.directives] });
}

/**
 * The schema as served: the printed one, with the legacy lookup's deprecation
 * naming the configured sunset date when it is not the default.
 */
function schemaWithSunset(sunsetDate: string): GraphQLSchema {
  const schema = withSpecifiedDirectives(printedSchema);
  if (sunsetDate === DEFAULT_LEGACY_SUNSET_DATE) return schema;
  return mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (field, fieldName) =>
      fieldName === 'getPetById' ? { ...field, deprecationReason: legacyLookupDeprecation(sunsetDate) } : field,
  });
}

/**
 * Errors a client may see keep their code; everything unexpected is logged
 * with the request id and replaced by a masked INTERNAL error. Errors raised
 * before execution (syntax, validation) are the client's: VALIDATION_FAILED.
 * The same holds for subscriptions, when subscribing and in each event.
 * Every error sent is counted by its code (`countError`), once.
 */
function errorCodes(logger: Logger, countError: (code: string) => void): Plugin<GraphQLContext> {
  const classify = (error: GraphQLError, requestId: string | undefined): GraphQLError => {
    if (typeof error.extensions?.code === 'string' && typeof error.extensions.status === 'number') return error;
    const original = error.originalError;
    if (!original || original instanceof GraphQLError) {
      return new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions: { ...error.extensions, code: 'VALIDATION_FAILED', status: 400 },
      });
    }
    const known = toDomainError(original);
    if (known) return toGraphQLError(known, error.path);
    logger.error({ err: original, requestId, path: error.path?.join('.') }, 'unexpected error in a resolver');
    return maskedInternalError(error.path);
  };
  const classifyAndCount = (error: GraphQLError, requestId: string | undefined) => {
    const classified = classify(error, requestId);
    countError(String(classified.extensions.code));
    return classified;
  };
  /** An execution result (or one event of a subscription) with its errors classified. */
  const settle = (
    result: { errors?: ReadonlyArray<GraphQLError> },
    args: { contextValue: unknown },
    setResult: (result: never) => void,
  ) => {
    if (!result.errors?.length) return;
    const requestId = (args.contextValue as GraphQLContext).requestId;
    setResult({ ...result, errors: result.errors.map((error) => classifyAndCount(error, requestId)) } as never);
  };
  return {
    onExecute: () => ({
      onExecuteDone: ({ args, result, setResult }) => {
        if ('errors' in result) settle(result, args, setResult);
      },
    }),
    onSubscribe: () => ({
      onSubscribeResult: ({ args, result, setResult }) => {
        // Refused when subscribing (a missing scope, say): one result with the errors.
        if ('errors' in result) settle(result, args, setResult);
        return { onNext: ({ args, result, setResult }) => settle(result, args, setResult) };
      },
    }),
    onValidate:
      () =>
      ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((error) => classifyAndCount(error, undefined)));
      },
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(classifyAndCount(result, undefined));
      },
    // What yoga refuses before any of the above runs (a body that is not JSON, a
    // mutation over GET...) carries yoga's own code, and no status of ours: counted here.
    onResultProcess: ({ result }) => {
      for (const single of Array.isArray(result) ? result : [result]) {
        if (isAsyncIterable(single)) continue;
        for (const error of single.errors ?? []) {
          if (typeof error.extensions?.status !== 'number') countError(String(error.extensions?.code ?? 'UNKNOWN'));
        }
      }
    },
  };
}

export function createGraphQLHandler(options: GraphQLOptions): YogaServerInstance<RequestContext, GraphQLContext> {
  const graphiql = securedGraphiQL({ title: 'Petstore GraphQL gateway' });
  return createYoga<RequestContext, GraphQLContext>({
    schema: schemaWithSunset(options.legacySunsetDate),
    graphqlEndpoint: '/graphql',
    context: ({ requestId, principal }) => ({
      prisma: options.prisma,
      requestId,
      principal,
      events: options.events.publisher,
      pubsub: options.events.pubsub,
      legacy: { sunsetDate: options.legacySunsetDate, afterSunset: options.legacyAfterSunset },
    }),
    // Node's own Fetch API, not yoga's ponyfill: Hono re-wraps yoga's response in a native
    // Response, and a ponyfill stream body in there crashes the process (undici's
    // ReadableStreamFrom) when an SSE client goes away.
    fetchAPI: { Request, Response, Headers, ReadableStream, TextEncoder, TextDecoder },
    graphiql: options.graphiql ? graphiql.options : false,
    renderGraphiQL: graphiql.render,
    // CORS is the gateway's (the CORS_ORIGINS setting); yoga's own would let any origin in.
    cors: false,
    // No file uploads here: a multipart body is refused (415) rather than parsed.
    multipart: false,
    // errorCodes() already masked what must be; yoga's own masking would hide our codes.
    maskedErrors: false,
    logging: options.logger,
    landingPage: false,
    batching: { limit: options.limits.maxBatch },
    // The HTTP layer refuses bodies over the limit before they reach yoga (limitBody in guards.ts),
    // by Content-Length or by counting a chunked body; yoga's own check would pipe every body
    // through one more stream.
    maxRequestBodySize: false,
    plugins: [
      queryLimits(options.limits, options.introspection),
      variablePageCost(options.limits.maxCost),
      refuseRoundedIds(),
      endSubscriptionsAtTokenExpiry(),
      ...(options.introspection ? [] : [noIntrospection]),
      // Before errorCodes: it gives yoga's own refusals our codes (and counts them), so that
      // errorCodes' count of errors without a status of ours finds none left to count.
      finalErrors({
        logger: options.logger,
        introspection: options.introspection,
        countError: (code) => options.metrics.errors.inc({ code }),
      }),
      errorCodes(options.logger, (code) => options.metrics.errors.inc({ code })),
      observeOperations(options.metrics),
      ...(options.responseCache
        ? responseCache({
            ...options.responseCache,
            redis: options.redis,
            logger: options.logger,
            countLookup: (result) => options.metrics.responseCacheLookups.inc({ result }),
          })
        : []),
      ...(options.graphiql ? [graphiql.plugin] : []),
    ],
  });
}
