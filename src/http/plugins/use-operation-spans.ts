import { useOnResolve } from '@envelop/on-resolve';
import { context as activeContext, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import {
  activeOperationSpan,
  describeOperation,
  errorCodes,
  failSpan,
  inSpan,
  startOperationSpan,
  tracer,
} from '../../observability/tracing/spans.js';
import type { RequestContext } from '../types.js';

type Context = GraphQLContext & RequestContext & { params?: { query?: string; operationName?: string | null } };

/**
 * The GraphQL spans of a request yoga answers (src/observability/tracing/spans.ts names them): one
 * operation span per operation, named `{type} {name}`, with graphql.parse, graphql.validate and
 * graphql.execute (or graphql.subscribe) beneath it, and Prisma's and PostgreSQL's spans beneath those.
 * Yoga's instrumentation hooks run each phase inside its span, so whatever the phase calls (Prisma,
 * pg, Redis) is its child; a query plan's reads are in `graphql.plan` beneath graphql.execute
 * (use-query-plans.ts). `resolvers`: a span per resolver call as well (plans call no resolvers).
 * Placed after useErrorMasking: the codes it gives errors are the ones the spans carry.
 */
export function useOperationSpans({ resolvers }: { resolvers: boolean }): Plugin<Context> {
  const plugin: Plugin<Context> = {
    instrumentation: {
      operation: (_payload, wrapped) => {
        const { span, context } = startOperationSpan();
        return activeContext.with(context, () => settle(span, wrapped));
      },
      // Phases only beneath an operation span: never a trace of their own (a WebSocket operation's parse).
      parse: (_payload, wrapped) => (activeOperationSpan() ? inSpan('graphql.parse', wrapped) : wrapped()),
      validate: (_payload, wrapped) => (activeOperationSpan() ? inSpan('graphql.validate', wrapped) : wrapped()),
      execute: (_payload, wrapped) => (activeOperationSpan() ? inSpan('graphql.execute', wrapped) : wrapped()),
      subscribe: (_payload, wrapped) => (activeOperationSpan() ? inSpan('graphql.subscribe', wrapped) : wrapped()),
    },
    onValidate: ({ context, params }) => {
      // The active span is graphql.validate's: the operation span is found by its context key.
      const span = activeOperationSpan();
      if (span) describeOperation(span, params.documentAST, context.params?.operationName, context.params?.query);
      return ({ valid, result }) => {
        if (!valid && span) failSpan(span, refusedCodes(result as readonly GraphQLError[]));
      };
    },
    onParse: () => ({ result }) => {
      if (!(result instanceof Error)) return;
      const span = activeOperationSpan();
      if (span) failSpan(span, refusedCodes([result as GraphQLError]));
    },
    onExecute: () => ({
      onExecuteDone: ({ result }) => {
        const span = activeOperationSpan();
        if (span && 'errors' in result) failSpan(span, errorCodes(result.errors));
      },
    }),
    onPluginInit: ({ addPlugin }) => {
      if (!resolvers) return;
      addPlugin(
        useOnResolve(({ info }) => {
          const span = tracer.startSpan(`resolve ${info.parentType.name}.${info.fieldName}`, {
            attributes: { 'graphql.field.name': info.fieldName, 'graphql.field.parent_type': info.parentType.name },
          });
          return ({ result }) => {
            if (result instanceof Error) failSpan(span, errorCodes([result as GraphQLError]));
            span.end();
          };
        }),
      );
    },
  };
  return plugin;
}

/** The codes of a document refused before it ran: graphql-js' own errors carry none, and are VALIDATION_FAILED. */
const refusedCodes = (errors: readonly GraphQLError[]) => errorCodes(errors).map((code) => (code === 'INTERNAL' ? 'VALIDATION_FAILED' : code));

/**
 * Runs a WebSocket operation's execution (graphql-ws calls execute and subscribe itself, outside
 * yoga's operation) in an operation span of its own, named and marked as yoga's are.
 */
export function inOperationSpan<T>(args: { document: DocumentNode; operationName?: string | null }, run: () => T): T {
  const { span, context } = startOperationSpan();
  describeOperation(span, args.document, args.operationName, undefined);
  return activeContext.with(context, () => settle(span, run));
}

/** Ends the operation span when the operation (a promise or not) is done. */
function settle<T>(span: Span, wrapped: () => T): T {
  const end = () => {
    span.end();
  };
  try {
    const result = wrapped();
    if (result instanceof Promise) return result.finally(end) as T;
    end();
    return result;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'INTERNAL' });
    end();
    throw error;
  }
}
