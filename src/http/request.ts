import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { TrustProxy } from '../config.js';

/** Reading what every transport reads the same way: the request id, the bearer token, the client's address. */

/** The X-Request-Id values taken as they are (also the OpenAPI document's pattern); any other is replaced. */
export const REQUEST_ID_PATTERN = '^[\\w.:-]{1,128}$';
const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

/** The request id to use: the client's own when it is 1–128 of letters, digits and `. _ : -`, else a new one. */
export function requestIdFrom(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** The token of an `Authorization: Bearer <token>` value; undefined when the value has another form. */
export function bearerToken(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

/**
 * The client's address of a request: the socket's, or, behind trusted proxies
 * (TRUST_PROXY), the address they name in X-Forwarded-For (@fastify/proxy-addr,
 * Express' and Fastify's rule).
 */
export function clientAddress(trust: TrustProxy): (request: IncomingMessage) => string | undefined {
  if (trust === false) return (request) => request.socket.remoteAddress;
  const trusted =
    trust === true ? () => true : typeof trust === 'number' ? (_: string, hop: number) => hop < trust : proxyAddr.compile(trust);
  return (request) => (request.socket.remoteAddress === undefined ? undefined : proxyAddr(request, trusted));
}

/**
 * `request` whose body was read already, as `body`: what reads it again (yoga's request parsers, by
 * `json()` or `text()`) gets that text, and everything else is the request's own. A `new
 * Request(url, { method, headers, body })` would copy its URL, headers and body to give the same,
 * which cost a miss of the response cache more than its lookup (docs/performance.md, "A miss read
 * its body twice").
 */
export function requestWithBody(request: Request, body: string): Request {
  let stream: ReadableStream<Uint8Array> | undefined;
  return new Proxy(request, {
    get(target, property) {
      switch (property) {
        case 'text':
          return () => Promise.resolve(body);
        case 'json':
          // Rejected, as Request's json() is, when the text is not JSON.
          return () => new Promise((resolve) => resolve(JSON.parse(body)));
        case 'arrayBuffer':
          return () => Promise.resolve(new TextEncoder().encode(body).buffer);
        case 'body':
          return (stream ??= new Response(body).body!);
        case 'bodyUsed':
          return false;
        case 'clone':
          return () => requestWithBody(target, body);
      }
      // The request's own accessors and methods, run on it (a Request's check their receiver).
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
