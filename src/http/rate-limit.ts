import type { MiddlewareHandler } from 'hono';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError } from '../errors.js';
import { refusal } from './guards.js';

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  points: number;
  windowSeconds: number;
  /** Shared counters for several gateway instances; in memory when absent. */
  redis?: Redis;
  /** Before every counter's key in Redis (RATE_LIMIT_KEY_PREFIX). */
  keyPrefix?: string;
  /** Who is counted: the token's subject, else the client address. */
  clientOf: (c: Parameters<MiddlewareHandler>[0]) => string;
}

/**
 * Per-client rate limit (rate-limiter-flexible). Every answer carries the
 * IETF RateLimit headers; a client over the limit gets 429 with Retry-After
 * and the spec's Error body.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler {
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

  return async (c, next) => {
    let state: RateLimiterRes;
    try {
      state = await limiter.consume(options.clientOf(c));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      c.header('Retry-After', String(retryAfter));
      c.header('RateLimit-Policy', policy);
      c.header('RateLimit', `limit=${options.points}, remaining=0, reset=${retryAfter}`);
      return refusal(c, new DomainError('RATE_LIMITED', `Too many requests; try again in ${retryAfter} s.`));
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
  };
}
