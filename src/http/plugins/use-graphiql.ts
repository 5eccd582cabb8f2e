import { createHash } from 'node:crypto';
import type { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { Plugin } from 'graphql-yoga';
import { DomainError, refusalBody } from '../../errors.js';
import { currentTraceId } from '../../observability/tracing/spans.js';
import type { RequestContext } from '../types.js';

/**
 * GraphiQL at GET /graphql for a browser (Accept: text/html): the page
 * @graphql-yoga/render-graphiql renders (its whole bundle inline, nothing from
 * a CDN), with a content security policy the page satisfies and nothing more:
 *
 * - scripts: only the page's own inline script, named by its SHA-256 hash;
 * - workers: the editor's, which the page makes from blob: URLs;
 * - connections: this origin only (the GraphQL endpoint);
 * - styles inline (the bundle's stylesheet and the editor's computed styles),
 *   images and fonts inline as data: URLs;
 * - no plugins, frames, forms, base URL or framing by other sites.
 *
 * Served by this plugin rather than by yoga's `graphiql` option, so that the
 * page and its policy are made in one place.
 */

export type GraphiQLOptions = NonNullable<Parameters<typeof renderGraphiQL>[0]>;

/** The SHA-256 source expressions of every inline script of `html`. */
export function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const [, attributes = '', body = ''] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(attributes)) continue;
    hashes.add(`'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`);
  }
  return [...hashes];
}

export function graphiqlContentSecurityPolicy(html: string): string {
  return [
    "default-src 'none'",
    `script-src ${inlineScriptHashes(html).join(' ')}`,
    'worker-src blob:',
    "connect-src 'self'",
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    'font-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

// Whether an Accept header also takes a JSON answer, as a browser's does (text/html, …, any type at q=0.8).
const TAKES_JSON = /\*\/\*|application\/(graphql-response\+)?json/;

/**
 * GET /graphql from a browser: GraphiQL when `served`; otherwise, for a browser that sent no query, a
 * VALIDATION_FAILED that says GraphiQL is off on purpose, rather than yoga's bare "Must provide query string.".
 */
export function useGraphiQL(endpoint: string, options: GraphiQLOptions, served = true): Plugin<object, RequestContext> {
  if (!served) {
    return {
      // The payload's url is parsed when first read: only once the request is a browser's GET.
      onRequest(payload) {
        const { request, fetchAPI, endResponse, serverContext } = payload;
        if (request.method !== 'GET') return;
        const accept = request.headers.get('accept') ?? '';
        if (!accept.includes('text/html') || !TAKES_JSON.test(accept)) return;
        const { url } = payload;
        if (url.searchParams.has('query') || (url.pathname !== endpoint && url.pathname !== `${endpoint}/`)) return;
        const error = new DomainError(
          'VALIDATION_FAILED',
          `No GraphQL query in this request. GraphiQL is not served here (GRAPHIQL=false, the default in production); ` +
            `send a query with POST ${endpoint}, or with GET ${endpoint}?query=….`,
        );
        if (serverContext?.trace) serverContext.trace.errorCode = error.code;
        const body = refusalBody(error, { requestId: serverContext?.requestId, traceId: currentTraceId() }, true);
        endResponse(
          new fetchAPI.Response(JSON.stringify(body), {
            status: 400,
            headers: { 'Content-Type': 'application/json; charset=utf-8' },
          }),
        );
      },
    };
  }
  let page: Promise<{ html: string; policy: string }> | undefined;
  // Loaded on the first GraphiQL page only: the package holds GraphiQL's whole bundle as
  // JavaScript strings (about 30 MB of heap), which a gateway without GraphiQL never needs.
  const rendered = () =>
    (page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
      const html = renderGraphiQL(options);
      return { html, policy: graphiqlContentSecurityPolicy(html) };
    }));
  return {
    // Not async, and the url (parsed when first read) left alone: every other request passes this hook.
    onRequest(payload) {
      const { request, fetchAPI, endResponse } = payload;
      if (request.method !== 'GET' || !request.headers.get('accept')?.includes('text/html')) return;
      const { url } = payload;
      if (url.pathname !== endpoint && url.pathname !== `${endpoint}/`) return;
      return rendered().then(({ html, policy }) =>
        endResponse(
          new fetchAPI.Response(html, {
            status: 200,
            headers: {
              'Content-Type': 'text/html',
              'Content-Security-Policy': policy,
              'X-Content-Type-Options': 'nosniff',
              'Referrer-Policy': 'no-referrer',
            },
          }),
        ),
      );
    },
  };
}
