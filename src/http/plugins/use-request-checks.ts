import type { Plugin } from 'graphql-yoga';

/**
 * What yoga accepts that the gateway does not, refused before any parameter is read:
 *
 * - a POST body that is not JSON. Yoga also reads `application/x-www-form-urlencoded` and
 *   `application/graphql` bodies; the gateway documents JSON only (GET for query parameters), and
 *   a form body is what a browser can send cross-origin without a CORS preflight. Answered with
 *   yoga's own empty 415, which the error seam (useErrorMasking) gives its Error body.
 */

/** The media types yoga reads as JSON (`application/graphql+json` is the GraphQL-over-HTTP draft's earlier name). */
const JSON_BODIES = new Set(['application/json', 'application/graphql+json']);

/** The media type of a Content-Type value: the first of a list, as yoga takes it, without parameters. */
const mediaType = (contentType: string | null) => contentType?.split(',')[0]?.split(';')[0]?.trim().toLowerCase() ?? '';

export function useRequestChecks(): Plugin {
  return {
    onRequestParse({ request, endResponse, fetchAPI }) {
      if (request.method === 'POST' && !JSON_BODIES.has(mediaType(request.headers.get('content-type')))) {
        endResponse(new fetchAPI.Response(null, { status: 415 }));
      }
    },
  };
}
