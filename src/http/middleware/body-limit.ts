import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DomainError } from '../../errors.js';
import { refusal } from '../refusal.js';
import type { GatewayEnv } from '../types.js';

/**
 * Request bodies over the limit are refused with 413 before they are read
 * whole. A body with a Content-Length (Node's parser holds it to exactly that
 * many bytes) is judged by the header alone, and a request with neither
 * Content-Length nor Transfer-Encoding has no body: both go on untouched, so
 * the handler can still read the body straight from the socket. Only a
 * chunked body is counted as it streams (hono's bodyLimit).
 */
export function limitBody(maxBytes: number): MiddlewareHandler<GatewayEnv> {
  const tooLarge = (c: Context<GatewayEnv>) =>
    refusal(c, new DomainError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes.`));
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    const length = c.req.header('content-length');
    const chunked = c.req.header('transfer-encoding') !== undefined;
    if (!chunked) {
      if (length === undefined) return next();
      if (/^\d+$/.test(length)) return Number(length) > maxBytes ? Promise.resolve(tooLarge(c)) : next();
    }
    return streamed(c, next);
  };
}
