import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import {
  DomainError,
  type ErrorCode,
  errorStatus,
  isDatabaseUnavailable,
  maskedInternalError,
  refusalBody,
  toDomainError,
  presentIds,
  withoutStackTrace,
} from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { OutageLog } from '../../observability/outages.js';
import { currentTraceId } from '../../observability/tracing/spans.js';
import type { RequestContext } from '../types.js';

/**
 * The one seam between every error GraphQL can produce and what a client sees,
 * for HTTP, SSE and WebSocket alike, at every phase (parse, validation,
 * execution, each subscription event, and yoga's own refusals of a request it
 * cannot read):
 *
 * - every error carries one of our codes with its status (src/errors.ts):
 *   a domain error its own, graphql-js' and yoga's refusals of the request or
 *   document VALIDATION_FAILED (or the code yoga's HTTP status means);
 * - anything else is logged with the request id and masked as INTERNAL;
 * - an error over a limit says which setting it is (`extensions.limit`);
 * - with introspection off, no message suggests names ("Did you mean …");
 * - every error is counted by its code, once (`countError`);
 * - an HTTP answer with errors carries the request id in its `extensions`,
 *   and a refusal before execution gets its HTTP status; a refusal yoga sends
 *   with no body (415, 406) gets the Error body.
 *
 * Yoga's own `maskedErrors.maskError` is not the seam: it is called without
 * the request, so the log line of a masked error could not carry its request
 * id, and yoga logs every error it rewrites, refusals of bad input included.
 * This plugin is registered first, so that its execution hooks also see the
 * results that later plugins give in place of execution (limits, the cache).
 */

/** The setting behind each limit, found by the message graphql-armor or yoga gives. */
const limitSettings: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Query depth limit of /, 'MAX_DEPTH'],
  [/^Aliases limit of /, 'MAX_ALIASES'],
  [/^Token limit of /, 'MAX_TOKENS'],
  [/^Query Cost limit of /, 'MAX_COST'],
  [/^Directives limit of /, 'MAX_DIRECTIVES'],
  [/^Batching is limited to /, 'MAX_BATCH'],
];

/** graphql-js' and armor's suggestions: `Did you mean "pet"?`, `Did you mean the enum value "SOLD"?`. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;
const HAS_SUGGESTION = /Did you mean [^?]*\?/;

interface HttpExtension {
  status?: number;
  spec?: boolean;
  headers?: Record<string, string>;
}

/** The code of an error yoga raised while reading the request, from the HTTP status it chose. */
function requestErrorCode(httpStatus: number | undefined): ErrorCode {
  switch (httpStatus) {
    case 405:
      return 'METHOD_NOT_ALLOWED';
    case 406:
      return 'NOT_ACCEPTABLE';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    default:
      return 'VALIDATION_FAILED';
  }
}

const isClassified = (extensions: Readonly<Record<string, unknown>> | undefined) =>
  typeof extensions?.code === 'string' && extensions.code in errorStatus && typeof extensions.status === 'number';

export interface ErrorMaskingOptions {
  logger: Pick<Logger, 'error'>;
  /** When off, suggestions of field, argument and enum names are taken out of messages. */
  introspection: boolean;
  /** Called with the code of each error sent, once per error. */
  countError(code: string): void;
  /** Told when the database could not answer, so that an outage is logged once, not per request. */
  databaseOutage?: Pick<OutageLog, 'failed'>;
}

type Result = { data?: unknown; errors?: readonly GraphQLError[]; extensions?: Record<string, unknown> };
/** A result as yoga writes it: the errors of an executed one already as the client reads them (asWritten). */
type Written = Omit<Result, 'errors'> & { errors?: ReadonlyArray<GraphQLError | GraphQLFormattedError> };

export function useErrorMasking({
  logger,
  introspection,
  countError,
  databaseOutage,
}: ErrorMaskingOptions): Plugin<object, RequestContext> {
  /** Errors whose answer tells the client when to try again (Retry-After): the database was unavailable. */
  const retryAfter = new WeakMap<GraphQLError, number>();
  /** The error as a client may see it, counted when it is given its code here. */
  const classify = (error: GraphQLError, requestId: string | undefined): GraphQLError => {
    if (isClassified(error.extensions)) {
      // A domain error already in its GraphQL shape; only the suggestions may need to go.
      if (introspection || !HAS_SUGGESTION.test(error.message)) return error;
      return rebuilt(error, error.message.replace(SUGGESTION, ''), error.extensions);
    }
    const { originalError: _shown, ...extensions } = { ...error.extensions } as Record<string, unknown>;
    let message = error.message;
    const withoutPrefix = message.replace(/^Syntax Error: /, '');
    const limit = limitSettings.find(([pattern]) => pattern.test(withoutPrefix))?.[1];
    const original = error.originalError;
    const http = extensions.http as HttpExtension | undefined;
    if (limit) {
      // armor words its limits as syntax errors; they are not.
      message = `${withoutPrefix.replace(/\.$/, '')} (the limit is the setting ${limit}).`;
      extensions.limit = limit;
      extensions.code = 'VALIDATION_FAILED';
    } else if (original instanceof SyntaxError && !http) {
      // JSON that yoga could not read in the request's parameters (`variables=%7Bnot`): the client's.
      message = `The request's JSON is not valid: ${original.message}`;
      extensions.code = 'VALIDATION_FAILED';
    } else if (original && !(original instanceof GraphQLError) && !http) {
      // Thrown by something other than graphql-js or yoga's request checks.
      const known = toDomainError(original);
      if (!known) {
        logger.error({ err: original, requestId, path: error.path?.join('.') }, 'unexpected error while serving GraphQL');
        countError('INTERNAL');
        return maskedInternalError(error.path);
      }
      message = known.message;
      extensions.code = known.code;
      if (known.field) extensions.field = known.field;
      if (known.extensions) Object.assign(extensions, known.extensions);
      if (known.code === 'UNAVAILABLE' && isDatabaseUnavailable(original)) databaseOutage?.failed(original);
      if (known.retryAfterSeconds !== undefined) {
        extensions.status = known.status;
        countError(known.code);
        const classified = rebuilt(error, message, extensions);
        retryAfter.set(classified, known.retryAfterSeconds);
        return classified;
      }
    } else {
      // graphql-js (syntax, validation, variables) or yoga (a request it cannot read).
      extensions.code = requestErrorCode(http?.status);
    }
    extensions.status = errorStatus[extensions.code as ErrorCode];
    if (!introspection) message = message.replace(SUGGESTION, '');
    countError(extensions.code as string);
    return rebuilt(error, message, extensions);
  };

  const classifyAll = (result: Result, requestId: string | undefined) =>
    result.errors?.length ? { ...result, errors: result.errors.map((error) => classify(error, requestId)) } : result;

  /** An HTTP answer: its errors classified, the request id beside them, the status of a refusal before execution. */
  const finish = (result: Result, requestId: string | undefined): Written => {
    if (!result.errors?.length) return result;
    const executed = 'data' in result;
    const errors = result.errors.map((error) => {
      const classified = classify(error, requestId);
      const retryAfterSeconds = retryAfter.get(classified);
      if (retryAfterSeconds !== undefined) {
        // The database could not answer: say when to come back; with nothing to show, answer 503.
        return rebuilt(classified, classified.message, {
          ...classified.extensions,
          http: {
            ...(result.data == null ? { status: classified.extensions.status as number } : {}),
            headers: { 'Retry-After': String(retryAfterSeconds) },
          },
        });
      }
      if (executed) return asWritten(classified);
      // Refused before execution, the HTTP status is the error's. GraphQL over HTTP: a document
      // that fails to parse or validate (`spec`) is answered 200 under application/json and 400
      // under application/graphql-response+json; a request that cannot be read is 4xx under both.
      const { spec: _spec, ...http } = (classified.extensions.http ?? {}) as HttpExtension;
      const unreadable = error.extensions?.code === 'BAD_REQUEST';
      return rebuilt(classified, classified.message, {
        ...classified.extensions,
        http: { ...http, ...(unreadable ? {} : { spec: true }), status: classified.extensions.status as number },
      });
    });
    return { ...result, errors, extensions: { ...result.extensions, ...presentIds({ requestId, traceId: currentTraceId() }) } };
  };

  const requestIdOf = (contextValue: unknown) => (contextValue as Partial<RequestContext>).requestId;

  return {
    onParse:
      ({ context }) =>
      ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(classify(result, requestIdOf(context)));
      },
    onValidate: ({ context, validateFn, setValidationFn }) => {
      // graphql-armor throws its limits from inside validation rather than reporting them:
      // as validation errors they get their code here, over HTTP and WebSocket alike.
      setValidationFn((...args) => {
        try {
          return validateFn(...args);
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
      });
      return ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((error) => classify(error, requestIdOf(context))));
      };
    },
    onExecute: () => ({
      onExecuteDone: ({ args, result, setResult }) => {
        const requestId = requestIdOf(args.contextValue);
        // A query answered as a stream (a live query's answers, @defer's parts): each one classified.
        if (isAsyncIterable(result)) return { onNext: ({ result, setResult }) => setResult(classifyAll(result as Result, requestId) as never) };
        if ('errors' in result) setResult(classifyAll(result, requestId) as never);
      },
    }),
    onSubscribe: () => ({
      onSubscribeResult: ({ args, result, setResult }) => {
        const requestId = requestIdOf(args.contextValue);
        // Refused when subscribing (a missing scope, say): one result with the errors.
        if ('errors' in result) setResult(classifyAll(result, requestId) as never);
        return { onNext: ({ result, setResult }) => setResult(classifyAll(result, requestId) as never) };
      },
    }),
    onResultProcess({ result, setResult, serverContext }) {
      const requestId = serverContext.requestId;
      // Yoga's types allow only GraphQLErrors here; its writers take the client's form as it is (asWritten).
      if (Array.isArray(result)) setResult(result.map((item) => finish(item as Result, requestId)) as never);
      else if (!isAsyncIterable(result)) setResult(finish(result as Result, requestId) as never);
    },
    onResponse({ response, serverContext, setResponse }) {
      // yoga refuses a body it cannot read (415) or an Accept it cannot meet (406) with no body at all.
      if ((response.status !== 415 && response.status !== 406) || response.headers.has('content-type')) return;
      const error =
        response.status === 415
          ? new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send GraphQL as application/json (POST), or as query parameters (GET).')
          : new DomainError(
              'NOT_ACCEPTABLE',
              'GraphQL answers application/graphql-response+json or application/json; the Accept header allows neither.',
            );
      // No result passed through the hooks above for these: counted here.
      countError(error.code);
      setResponse(
        new Response(JSON.stringify(refusalBody(error, { requestId: serverContext.requestId, traceId: currentTraceId() }, true)), {
          status: error.status,
          headers: { 'content-type': 'application/json' },
        }),
      );
    },
  };
}

/**
 * An error of an executed answer as the client reads it (`toJSON`: message, locations, path,
 * extensions). Yoga writes a GraphQLError by making it again without its internal extensions
 * (`http`, `unexpected`), which captures a stack trace per error: a refusal paid for it on every
 * request. An error that carries either is left to yoga, which takes the status and headers from it.
 */
function asWritten(error: GraphQLError): GraphQLError | GraphQLFormattedError {
  const extensions = error.extensions;
  if (extensions.http !== undefined || extensions.unexpected !== undefined) return error;
  return error.toJSON();
}

function rebuilt(error: GraphQLError, message: string, extensions: Record<string, unknown>): GraphQLError {
  // Without a stack: one made here would show this plugin's frames, and the error it replaces was logged (if at all) before.
  return withoutStackTrace(
    () =>
      new GraphQLError(message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        extensions,
      }),
  );
}
