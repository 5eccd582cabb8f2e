import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError, type ErrorCode, errorStatus, maskedInternalError, toDomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import { refusalBody } from './guards.js';
import type { RequestContext } from './graphql.js';

/**
 * The last word on every GraphQL answer, after execution and for the errors
 * raised before it (a request yoga cannot read, a batch over the limit, a
 * document over a graphql-armor limit, which armor throws from validation):
 *
 * - every error carries one of our codes with its status (src/errors.ts);
 *   yoga's own `BAD_REQUEST` becomes the code its HTTP status means;
 * - an error over a limit says which setting it is (`extensions.limit`);
 * - with introspection off, no message suggests names ("Did you mean …");
 * - an answer with errors carries the request id in its `extensions`, the
 *   same id as the X-Request-Id header and the log;
 * - a refusal yoga sends with no body (415, 406) gets the Error body.
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

const isClassified = (extensions: Record<string, unknown>) =>
  typeof extensions.code === 'string' && extensions.code in errorStatus && typeof extensions.status === 'number';

export interface GraphQLErrorOptions {
  logger: Logger;
  /** When off, suggestions of field, argument and enum names are taken out of messages. */
  introspection: boolean;
  /** Called with the code of each error given its code here (not those classified before). */
  countError?: (code: string) => void;
}

export function finalErrors({
  logger,
  introspection,
  countError = () => {},
}: GraphQLErrorOptions): Plugin<object, RequestContext> {
  /** `executed`: the result has `data`, so its errors come from resolvers, not from reading the request. */
  const finish = (error: GraphQLError, executed: boolean, requestId: string | undefined): GraphQLError => {
    const { originalError: _shown, ...extensions } = { ...error.extensions } as Record<string, unknown>;
    let message = error.message;
    const withoutPrefix = message.replace(/^Syntax Error: /, '');
    const limit = limitSettings.find(([pattern]) => pattern.test(withoutPrefix))?.[1];
    if (limit) {
      // armor words its limits as syntax errors; they are not.
      message = `${withoutPrefix.replace(/\.$/, '')} (the limit is the setting ${limit}).`;
      extensions.limit = limit;
    }
    if (!introspection) message = message.replace(SUGGESTION, '');

    // yoga's own refusals of a request it could not read (not of the document in it).
    const unreadable = extensions.code === 'BAD_REQUEST';
    const classified = isClassified(extensions);
    if (limit || !classified) {
      const original = error.originalError;
      const http = extensions.http as HttpExtension | undefined;
      if (original && !(original instanceof GraphQLError) && !http) {
        // Thrown by something other than graphql-js or yoga's request checks: ours to mask.
        const known = toDomainError(original);
        if (!known) {
          logger.error({ err: original, requestId }, 'unexpected error while serving GraphQL');
          countError('INTERNAL');
          return maskedInternalError(error.path);
        }
        extensions.code = known.code;
        extensions.status = known.status;
        message = known.message;
      } else {
        const code = limit ? 'VALIDATION_FAILED' : requestErrorCode(http?.status);
        extensions.code = code;
        extensions.status = errorStatus[code];
      }
      if (!classified) countError(extensions.code as string);
    }
    if (!executed) {
      // Refused before execution, the HTTP status is the error's. GraphQL over HTTP: a document
      // that fails to parse or validate (`spec`) is answered 200 under application/json and 400
      // under application/graphql-response+json; a request that cannot be read is 4xx under both.
      const { spec: _spec, ...http } = (extensions.http ?? {}) as HttpExtension;
      extensions.http = { ...http, ...(unreadable ? {} : { spec: true }), status: extensions.status as number };
    }
    return new GraphQLError(message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      path: error.path,
      extensions,
    });
  };

  type Result = { data?: unknown; errors?: readonly GraphQLError[]; extensions?: Record<string, unknown> };
  const finishResult = <R extends Result>(result: R, requestId: string | undefined): R => {
    if (!result.errors?.length) return result;
    const executed = 'data' in result;
    return {
      ...result,
      errors: result.errors.map((error) => finish(error, executed, requestId)),
      extensions: { ...result.extensions, ...(requestId ? { requestId } : {}) },
    };
  };

  return {
    onResultProcess({ result, setResult, serverContext }) {
      const requestId = serverContext.requestId;
      if (Array.isArray(result)) setResult(result.map((item) => finishResult(item as Result, requestId)));
      else if (!(Symbol.asyncIterator in result)) setResult(finishResult(result as Result, requestId));
    },
    onResponse({ response, serverContext, setResponse }) {
      // yoga refuses a body it cannot read (415) or an Accept it cannot meet (406) with no body at all.
      if ((response.status !== 415 && response.status !== 406) || response.headers.has('content-type')) return;
      const error =
        response.status === 415
          ? new DomainError(
              'UNSUPPORTED_MEDIA_TYPE',
              'Send GraphQL as application/json (POST), or as query parameters (GET).',
            )
          : new DomainError(
              'NOT_ACCEPTABLE',
              'GraphQL answers application/graphql-response+json or application/json; the Accept header allows neither.',
            );
      const requestId = (serverContext as Partial<RequestContext>).requestId;
      setResponse(
        new Response(JSON.stringify(refusalBody(error, requestId, true)), {
          status: error.status,
          headers: { 'content-type': 'application/json' },
        }),
      );
    },
  };
}
