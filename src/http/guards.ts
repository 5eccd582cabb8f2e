import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { anonymous, type Principal } from '../auth/scopes.js';
import type { TokenVerifier } from '../auth/tokens.js';
import { DomainError, errorBody } from '../errors.js';

/** What the guards leave for the handlers behind them. */
export type GuardedEnv = { Variables: { requestId: string; principal: Principal } };

/**
 * The body of a refusal: the spec's Error object with the request id. Sent
 * to /graphql it also carries a GraphQL `errors` list and the request id in
 * the response's `extensions`, so GraphQL clients read it as they read any
 * other GraphQL error.
 */
export function refusalBody(error: DomainError, requestId: string | undefined, graphql: boolean) {
  const body = errorBody(error, requestId);
  if (!graphql) return body;
  return {
    ...body,
    errors: [{ message: body.message, extensions: { code: body.code, status: body.status } }],
    ...(requestId ? { extensions: { requestId } } : {}),
  };
}

/** A request refused before any handler ran, answered with its Error body (see refusalBody). */
export function refusal(c: Context, error: DomainError): Response {
  const body = refusalBody(error, c.get('requestId') as string | undefined, c.req.path === '/graphql');
  return c.json(body, body.status as 400);
}

/**
 * Request bodies over the limit are refused with 413 before they are read
 * whole. A body with a Content-Length (Node's parser holds it to exactly that
 * many bytes) is judged by the header alone, and a request with neither
 * Content-Length nor Transfer-Encoding has no body: both go on untouched, so
 * the handler can still read the body straight from the socket. Only a
 * chunked body is counted as it streams (hono's bodyLimit).
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const tooLarge = (c: Context) =>
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

const BEARER = /^Bearer\s+(\S+)$/i;

/** What the guards leave for the handlers behind them, and for each other. */
export type AuthenticatedEnv = {
  Variables: GuardedEnv['Variables'] & {
    /** Why the request's token was refused; answered by refuseInvalidTokens, after the rate limit. */
    tokenRefusal?: DomainError;
  };
};

/**
 * `Authorization: Bearer <JWT>` → the request's principal. No header is
 * anonymous. A header that is present but wrong (malformed, bad signature,
 * expired) is never anonymous: the refusal is kept for refuseInvalidTokens,
 * so that the rate limit counts the request (by address) first and nobody can
 * try tokens faster than the limit allows.
 */
export function authenticate(verify: TokenVerifier): MiddlewareHandler<AuthenticatedEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    c.set('principal', anonymous);
    if (header === undefined) return next();
    const token = BEARER.exec(header)?.[1];
    try {
      if (!token) throw new DomainError('UNAUTHENTICATED', 'The Authorization header must be "Bearer <token>".');
      c.set('principal', await verify(token));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      c.set('tokenRefusal', error);
    }
    return next();
  };
}

/** Answers a request whose token authenticate() refused: 401 (or 503 when the keys cannot be fetched). */
export function refuseInvalidTokens(): MiddlewareHandler<AuthenticatedEnv> {
  return async (c, next) => {
    const error = c.get('tokenRefusal');
    if (!error) return next();
    // RFC 6750 §3: a token that is missing its way, expired or forged. (UNAVAILABLE, when the
    // identity provider's keys cannot be fetched, is not the token's fault.)
    if (error.code === 'UNAUTHENTICATED') c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
    return refusal(c, error);
  };
}

/**
 * A request still running after the limit is answered 503 TIMEOUT at once.
 * The answer is the refusal itself, not a thrown exception, so no error
 * handler turns it into a 500. The work behind it is not interrupted: a
 * statement still waiting ends at the statement timeout, and a transaction
 * either commits or rolls back as a whole.
 */
export function limitDuration(ms: number): MiddlewareHandler {
  return async (c, next) => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), ms);
    });
    try {
      const outcome = await Promise.race([next().then(() => 'done' as const), expired]);
      if (outcome === 'expired') {
        c.res = refusal(c, new DomainError('TIMEOUT', `The request took longer than ${ms} ms and was stopped.`));
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
