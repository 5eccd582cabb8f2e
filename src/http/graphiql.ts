import { createHash } from 'node:crypto';
import type { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { Plugin } from 'graphql-yoga';

/**
 * GraphiQL as served at GET /graphql: the page @graphql-yoga/render-graphiql
 * renders (its whole bundle inline, nothing from a CDN), with a content
 * security policy the page satisfies and nothing more:
 *
 * - scripts: only the page's own inline script, named by its SHA-256 hash;
 * - workers: the editor's, which the page makes from blob: URLs;
 * - connections: this origin only (the GraphQL endpoint);
 * - styles inline (the bundle's stylesheet and the editor's computed styles),
 *   images and fonts inline as data: URLs;
 * - no plugins, frames, forms, base URL or framing by other sites.
 */

export type GraphiQLOptions = Parameters<typeof renderGraphiQL>[0];

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

/**
 * GraphiQL for yoga: its options, its renderer, and the plugin that puts the
 * policy on the page's response. yoga renders the page with the options it
 * was given, which are these; the page is rendered once, on its first
 * request, and the policy computed from it.
 */
export function securedGraphiQL(options: NonNullable<GraphiQLOptions>) {
  let page: { html: string; policy: string } | undefined;
  const rendered = async () => {
    if (!page) {
      // Loaded on the first GraphiQL page only: the package holds GraphiQL's whole bundle as
      // JavaScript strings (about 30 MB of heap), which a gateway without GraphiQL never needs.
      const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
      const html = renderGraphiQL(options);
      page = { html, policy: graphiqlContentSecurityPolicy(html) };
    }
    return page;
  };
  const plugin: Plugin = {
    onResponse({ request, response }) {
      if (request.method !== 'GET' || !response.headers.get('content-type')?.startsWith('text/html')) return;
      // The page has been rendered by now: this is its response.
      if (page) response.headers.set('Content-Security-Policy', page.policy);
      response.headers.set('X-Content-Type-Options', 'nosniff');
      response.headers.set('Referrer-Policy', 'no-referrer');
    },
  };
  return { options, render: async () => (await rendered()).html, plugin };
}
