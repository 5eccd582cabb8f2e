import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Principal } from '../auth/scopes.js';
import type { GraphQLContext } from '../builder.js';
import type { Limits } from '../config.js';
import type { PrismaClient } from '../db.js';
import { maskedInternalError, toDomainError, toGraphQLError } from '../errors.js';
import { DEFAULT_LEGACY_SUNSET_DATE } from '../legacy.js';
import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { schema as printedSchema } from '../schema/index.js';
import { legacyLookupDeprecation } from '../schema/pet.js';

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
  const observe = (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined) => {
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
  return {
    onExecute: ({ args }) => {
      const context = args.contextValue;
      const observed = observe(args.schema, args.document, args.operationName ?? undefined);
      if (context.trace) context.trace.operation = observed.name;
      if (observed.deprecated.length === 0) return;
      const client = context.principal.subject ?? 'anonymous';
      for (const target of observed.deprecated) metrics.deprecatedUse.inc({ target, client });
    },
  };
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
 * The schema as served: the printed one, with the legacy lookup's deprecation
 * naming the configured sunset date when it is not the default.
 */
function schemaWithSunset(sunsetDate: string): GraphQLSchema {
  if (sunsetDate === DEFAULT_LEGACY_SUNSET_DATE) return printedSchema;
  return mapSchema(printedSchema, {
    [MapperKind.ROOT_FIELD]: (field, fieldName) =>
      fieldName === 'getPetById' ? { ...field, deprecationReason: legacyLookupDeprecation(sunsetDate) } : field,
  });
}

/**
 * Errors a client may see keep their code; everything unexpected is logged
 * with the request id and replaced by a masked INTERNAL error. Errors raised
 * before execution (syntax, validation) are the client's: VALIDATION_FAILED.
 */
function errorCodes(logger: Logger): Plugin<GraphQLContext> {
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
  return {
    onExecute: () => ({
      onExecuteDone: ({ args, result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length) return;
        const requestId = (args.contextValue as GraphQLContext).requestId;
        setResult({ ...result, errors: result.errors.map((error) => classify(error, requestId)) });
      },
    }),
    onValidate:
      () =>
      ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((error) => classify(error, undefined)));
      },
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(classify(result, undefined));
      },
  };
}

export function createGraphQLHandler(options: GraphQLOptions): YogaServerInstance<RequestContext, GraphQLContext> {
  return createYoga<RequestContext, GraphQLContext>({
    schema: schemaWithSunset(options.legacySunsetDate),
    graphqlEndpoint: '/graphql',
    context: ({ requestId, principal }) => ({
      prisma: options.prisma,
      requestId,
      principal,
      events: options.events.publisher,
      pubsub: options.events.pubsub,
    }),
    graphiql: options.graphiql ? { title: 'Petstore GraphQL gateway' } : false,
    // Loaded on the first GraphiQL page only: the package holds GraphiQL's whole bundle as
    // JavaScript strings (about 30 MB of heap), which a gateway without GraphiQL never needs.
    renderGraphiQL: async (graphiqlOptions) =>
      (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(graphiqlOptions),
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
      ...(options.introspection ? [] : [noIntrospection]),
      errorCodes(options.logger),
      observeOperations(options.metrics),
    ],
  });
}
