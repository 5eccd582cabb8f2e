import type { MiddlewareHandler } from 'hono';
import { anonymous } from '../../auth/scopes.js';
import type { TokenVerifier } from '../../auth/tokens.js';
import { DomainError } from '../../errors.js';
import { refusal } from '../refusal.js';
import { bearerToken } from '../request.js';
import type { GatewayEnv } from '../types.js';

/**
 * `Authorization: Bearer <JWT>` → the request's principal. No header is
 * anonymous. A header that is present but wrong (malformed, bad signature,
 * expired) is never anonymous: the refusal is kept for refuseInvalidTokens,
 * so that the rate limit counts the request (by address) first and nobody can
 * try tokens faster than the limit allows.
 */
export function authenticate(verify: TokenVerifier): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    c.set('principal', anonymous);
    if (header === undefined) return next();
    const token = bearerToken(header);
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
export function refuseInvalidTokens(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const error = c.get('tokenRefusal');
    if (!error) return next();
    // RFC 6750 §3: a token that is missing its way, expired or forged. (UNAVAILABLE, when the
    // identity provider's keys cannot be fetched, is not the token's fault.)
    if (error.code === 'UNAUTHENTICATED') c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
    return refusal(c, error);
  };
}
