import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * What yoga accepts that the gateway does not, refused before any parameter is read:
 *
 * - a POST body that is not JSON. Yoga also reads `application/x-www-form-urlencoded` and
 *   `application/graphql` bodies; the gateway documents JSON only (GET for query parameters), and
 *   a form body is what a browser can send cross-origin without a CORS preflight. Answered with
 *   yoga's own empty 415, which the error seam (useErrorMasking) gives its Error body.
 * - an empty batch: yoga answers `[]`, which tells a client nothing of its mistake.
 * - an `operationName` that is not a string: yoga checks the types of `query`, `variables` and
 *   `extensions` but not this one, and graphql-js then fails to pick an operation ("Could not
 *   determine what operation to execute."), a document error answered 200 under application/json.
 *
 * The errors carry yoga's `BAD_REQUEST` with HTTP 400, as its own refusals of a request it cannot
 * read: the seam makes them VALIDATION_FAILED, 400 under either Accept.
 */

/** The media types yoga reads as JSON (`application/graphql+json` is the GraphQL-over-HTTP draft's earlier name). */
const JSON_BODIES = new Set(['application/json', 'application/graphql+json']);

/** The media type of a Content-Type value: the first of a list, as yoga takes it, without parameters. */
const mediaType = (contentType: string | null) => contentType?.split(',')[0]?.split(';')[0]?.trim().toLowerCase() ?? '';

const badRequest = (message: string) => createGraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });

/** "a number", "an object": the JSON type of a value as a message names it. */
function jsonTypeOf(value: unknown): string {
  const type = Array.isArray(value) ? 'array' : typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

export function useRequestChecks({ maxBatch }: { maxBatch: number }): Plugin {
  return {
    onRequestParse({ request, endResponse, fetchAPI }) {
      if (request.method === 'POST' && !JSON_BODIES.has(mediaType(request.headers.get('content-type')))) {
        endResponse(new fetchAPI.Response(null, { status: 415 }));
        return;
      }
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult) && requestParserResult.length === 0) {
            throw badRequest(
              `The batch is empty: send a JSON array of 1 to ${maxBatch} operations (MAX_BATCH), or one operation as a JSON object.`,
            );
          }
        },
      };
    },
    onParams({ params }) {
      const { operationName } = params as { operationName?: unknown };
      if (operationName != null && typeof operationName !== 'string') {
        throw badRequest(`The operationName parameter must be a string (or null), not ${jsonTypeOf(operationName)}.`);
      }
    },
  };
}
