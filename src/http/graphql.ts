import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
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
  return {
    onExecute: ({ args }) => {
      const context = args.contextValue;
      const operation = getOperationAST(args.document, args.operationName);
      if (context.trace) context.trace.operation = operation?.name?.value ?? operation?.operation ?? 'anonymous';
      const client = context.principal.subject ?? 'anonymous';
      const typeInfo = new TypeInfo(args.schema);
      visit(
        args.document,
        visitWithTypeInfo(typeInfo, {
          Field() {
            const field = typeInfo.getFieldDef();
            const parent = typeInfo.getParentType();
            if (field?.deprecationReason && parent) {
              metrics.deprecatedUse.inc({ target: `${parent.name}.${field.name}`, client });
            }
          },
        }),
      );
    },
  };
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
    renderGraphiQL,
    // errorCodes() already masked what must be; yoga's own masking would hide our codes.
    maskedErrors: false,
    logging: options.logger,
    landingPage: false,
    batching: { limit: options.limits.maxBatch },
    plugins: [
      queryLimits(options.limits, options.introspection),
      ...(options.introspection ? [] : [noIntrospection]),
      errorCodes(options.logger),
      observeOperations(options.metrics),
    ],
  });
}
