import type { MiddlewareHandler } from 'hono';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Principal } from '../../auth/scopes.js';
import { DomainError } from '../../errors.js';
import { refusal } from '../refusal.js';
import type { GatewayEnv } from '../types.js';

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  points: number;
  windowSeconds: number;
  /** Shared counters for several gateway instances; in memory when absent. */
  redis?: Redis;
  /** Before every counter's key in Redis (RATE_LIMIT_KEY_PREFIX). */
  keyPrefix?: string;
}

/** Who is counted: the token's subject, else the client's address. */
export function rateLimitClient(principal: Principal, address: string | undefined): string {
  return principal.subject ? `sub:${principal.subject}` : `ip:${address ?? 'unknown'}`;
}

export interface RateLimiter {
  /**
   * For HTTP: every answer carries the IETF RateLimit headers; a client over
   * the limit gets 429 with Retry-After and the spec's Error body.
   */
  middleware(clientOf: (c: Parameters<MiddlewareHandler<GatewayEnv>>[0]) => string): MiddlewareHandler<GatewayEnv>;
  /** For each WebSocket operation: the RATE_LIMITED error when the client is over the limit. */
  refusalFor(client: string): Promise<DomainError | undefined>;
}

const tooMany = (retryAfter: number) =>
  new DomainError('RATE_LIMITED', `Too many requests; try again in ${retryAfter} s.`);

/**
 * Per-client rate limit (rate-limiter-flexible), one count for HTTP requests
 * and WebSocket operations alike.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const limiter = options.redis
    ? new RateLimiterRedis({
        storeClient: options.redis,
        keyPrefix: options.keyPrefix ?? 'petstore-rate',
        points: options.points,
        duration: options.windowSeconds,
        useRedisPackage: false,
        // While Redis is unreachable, each instance keeps counting on its own rather than failing requests.
        insuranceLimiter: new RateLimiterMemory({ points: options.points, duration: options.windowSeconds }),
      })
    : new RateLimiterMemory({ points: options.points, duration: options.windowSeconds });
  const policy = `${options.points};w=${options.windowSeconds}`;

  /** The counter's state after this request, or the seconds to wait when over the limit. */
  const consume = async (client: string): Promise<RateLimiterRes | { retryAfter: number }> => {
    try {
      return await limiter.consume(client);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { retryAfter: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  };

  return {
    middleware: (clientOf) => async (c, next) => {
      const state = await consume(clientOf(c));
      if ('retryAfter' in state) {
        const { retryAfter } = state;
        c.header('Retry-After', String(retryAfter));
        c.header('RateLimit-Policy', policy);
        c.header('RateLimit', `limit=${options.points}, remaining=0, reset=${retryAfter}`);
        return refusal(c, tooMany(retryAfter));
      }
      await next();
      // Set on the final response itself: c.header() after the handler would copy the whole
      // response first (hono re-creates a finalized Response to make its headers writable).
      const headers = c.res.headers;
      headers.set('RateLimit-Policy', policy);
      headers.set(
        'RateLimit',
        `limit=${options.points}, remaining=${state.remainingPoints}, reset=${Math.ceil(state.msBeforeNext / 1000)}`,
      );
    },
    async refusalFor(client) {
      const state = await consume(client);
      return 'retryAfter' in state ? tooMany(state.retryAfter) : undefined;
    },
  };
}
