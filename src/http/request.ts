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
