import { createHash } from 'node:crypto';
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  isSpanContextValid,
  type Span,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { type DocumentNode, getOperationAST } from 'graphql';

/**
 * The spans the gateway makes itself (GraphQL operations, query plans, events), by the OpenTelemetry
 * semantic conventions where they say something. With tracing off, @opentelemetry/api's tracer is a
 * no-op: each call below costs a function call and returns a span that records nothing.
 */
export const tracer = trace.getTracer('petstore-gateway');

/** The trace and span of the work running now, for log lines and error answers; undefined when untraced. */
export function currentTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { traceId: ids.traceId, spanId: ids.spanId } : undefined;
}

export const currentTraceId = () => currentTraceIds()?.traceId;

/** Marks a span failed with the error codes of the answer (`error.type` is the first). */
export function failSpan(span: Span, codes: readonly string[]): void {
  if (codes.length === 0) return;
  span.setAttribute('error.type', codes[0]!);
  span.setStatus({ code: SpanStatusCode.ERROR, message: [...new Set(codes)].join(', ') });
}

/** The error codes of a GraphQL result's errors (extensions.code, INTERNAL where there is none). */
export function errorCodes(errors: readonly { extensions?: Record<string, unknown> }[] | undefined): string[] {
  return (errors ?? []).map((error) => (typeof error.extensions?.code === 'string' ? error.extensions.code : 'INTERNAL'));
}

// ---- GraphQL operations -------------------------------------------------------------------------

/**
 * The operation span, kept in the context beside the active span so that every phase beneath it finds
 * it (yoga's phases, and a WebSocket operation's, which graphql-ws runs outside yoga's operation).
 */
const OPERATION_SPAN = createContextKey('petstore graphql operation span');

export function startOperationSpan(): { span: Span; context: Context } {
  const span = tracer.startSpan('graphql');
  return { span, context: trace.setSpan(context.active(), span).setValue(OPERATION_SPAN, span) };
}

/** The operation span the active work belongs to, if any. */
export const activeOperationSpan = (): Span | undefined => context.active().getValue(OPERATION_SPAN) as Span | undefined;

const hashes = new WeakMap<DocumentNode, string>();

/**
 * Names the operation span `{type} {name}` and sets what the conventions ask for; the document is
 * known by its hash (`sha256:<hex>` of its text, the id trusted documents use), never by its text or
 * its variables.
 */
export function describeOperation(span: Span, document: DocumentNode, operationName: string | null | undefined, text: string | undefined): void {
  if (!span.isRecording()) return;
  const operation = getOperationAST(document, operationName);
  if (!operation) return;
  const name = operation.name?.value;
  span.updateName(name ? `${operation.operation} ${name}` : operation.operation);
  const attributes: Attributes = { 'graphql.operation.type': operation.operation };
  if (name) attributes['graphql.operation.name'] = name;
  let hash = hashes.get(document);
  if (hash === undefined && text !== undefined) {
    hash = `sha256:${createHash('sha256').update(text).digest('hex')}`;
    hashes.set(document, hash);
  }
  if (hash) attributes['graphql.document.hash'] = hash;
  span.setAttributes(attributes);
}

/** Runs `work` in a child span of the active one, ending it when `work` settles. */
export function inSpan<T>(name: string, work: () => T, attributes?: Attributes): T {
  const span = tracer.startSpan(name, attributes ? { attributes } : undefined);
  const ended = (value: T) => {
    span.end();
    return value;
  };
  let result: T;
  try {
    result = context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    failSpan(span, ['INTERNAL']);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(ended, (error: unknown) => {
      failSpan(span, ['INTERNAL']);
      span.end();
      throw error;
    }) as T;
  }
  return ended(result);
}
