import type { MiddlewareHandler } from 'hono';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { serializeList } from 'structured-headers';
import type { Principal } from '../../auth/scopes.js';
import { DomainError } from '../../errors.js';
import type { CacheMetrics } from '../../observability/caches.js';
import { refusal } from '../refusal.js';
import { type Counted, createSharedCounts, overLimit, type OverLimit } from './rate-limit-shares.js';
import type { CostBudget } from '../demand/budget.js';
import type { DemandNote, GatewayEnv } from '../types.js';

export interface RateLimitOptions {
  /** Requests a client may make per window. */
  points: number;
  windowSeconds: number;
  /** Shared counters for several gateway instances; in memory when absent. */
  redis?: Redis;
  /** Before every counter's key in Redis (RATE_LIMIT_KEY_PREFIX). */
  keyPrefix?: string;
  /** Each client's cost budget (src/http/demand/budget.ts), told in the same headers. */
  budget?: CostBudget;
  /** Clients whose shares of their limit (Redis) an instance keeps; the least recently seen go first. */
  maxClients?: number;
  caches?: CacheMetrics;
}

/** Where one policy stands for this client: its quota and window, what is left and when it is whole again. */
interface PolicyState {
  name: 'requests' | 'cost';
  quota: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), one named policy per
 * limit: `requests` (the request count per window) and `cost` (the budget of cost points, whose
 * window is the time it takes to refill from empty).
 *
 *     RateLimit-Policy: "requests";q=600;w=60, "cost";q=1000;w=20
 *     RateLimit: "requests";r=599;t=60, "cost";r=974;t=1
 */
export function rateLimitHeaders(policies: PolicyState[]) {
  return {
    'RateLimit-Policy': policyHeader(policies),
    RateLimit: policies.map((policy) => stateMember(policy.name, Math.max(0, policy.remaining), Math.max(0, policy.resetSeconds))).join(', '),
  };
}

/** The policies' header, which changes only with the settings: serialised once per set of policies. */
const policyHeaders = new Map<string, string>();
function policyHeader(policies: PolicyState[]): string {
  const key = policies.map((policy) => `${policy.name};${policy.quota};${policy.windowSeconds}`).join(',');
  let header = policyHeaders.get(key);
  if (header === undefined) {
    header = serializeList(policies.map((policy) => [policy.name, new Map([['q', policy.quota], ['w', policy.windowSeconds]])]));
    // A handful of policy sets exist (with and without the cost budget); never more than a few.
    if (policyHeaders.size >= 8) policyHeaders.clear();
    policyHeaders.set(key, header);
  }
  return header;
}

/** The largest integer a structured field may carry (RFC 8941 §3.3.1). */
const MAX_FIELD_INTEGER = 999_999_999_999_999;

/**
 * One policy's state as a member of the RateLimit list. It is written on every answer: the usual
 * case (a token name, two whole numbers) is written directly, exactly as serializeList writes it;
 * anything else goes through the library.
 */
function stateMember(name: PolicyState['name'], remaining: number, resetSeconds: number): string {
  const whole = (value: number) => Number.isInteger(value) && value <= MAX_FIELD_INTEGER;
  if (whole(remaining) && whole(resetSeconds)) return `"${name}";r=${remaining};t=${resetSeconds}`;
  return serializeList([[name, new Map([['r', remaining], ['t', resetSeconds]])]]);
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
 * and WebSocket operations alike; through Redis, a busy client's requests are
 * counted a share at a time (rate-limit-shares.ts).
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

  /** The counter's state after this request, or the seconds to wait when over the limit. */
  const consume = options.redis
    ? createSharedCounts(limiter, { points: options.points, maxClients: options.maxClients ?? 100_000, caches: options.caches })
    : async (client: string): Promise<Counted | OverLimit> => {
        try {
          return await limiter.consume(client);
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          return overLimit(rejection);
        }
      };

  const budget = options.budget;
  const costPolicy = async (note: DemandNote): Promise<PolicyState[]> => {
    if (!budget) return [];
    let state = note.budget;
    if (!state) {
      try {
        state = await budget.peek(note.client);
      } catch {
        return [];
      }
    }
    const { capacity, refillPerSecond } = budget.settings;
    return [{ name: 'cost', quota: capacity, windowSeconds: Math.ceil(capacity / refillPerSecond), remaining: state.remaining, resetSeconds: state.resetSeconds }];
  };
  const requestsPolicy = (remaining: number, resetSeconds: number): PolicyState => ({
    name: 'requests',
    quota: options.points,
    windowSeconds: options.windowSeconds,
    remaining,
    resetSeconds,
  });

  return {
    middleware: (clientOf) => async (c, next) => {
      const note: DemandNote = { client: clientOf(c) };
      c.set('demand', note);
      const state = await consume(note.client);
      if ('retryAfter' in state) {
        const { retryAfter } = state;
        c.header('Retry-After', String(retryAfter));
        for (const [name, value] of Object.entries(rateLimitHeaders([requestsPolicy(0, retryAfter), ...(await costPolicy(note))]))) c.header(name, value);
        return refusal(c, tooMany(retryAfter));
      }
      await next();
      // Set on the final response itself: c.header() after the handler would copy the whole
      // response first (hono re-creates a finalized Response to make its headers writable).
      const headers = c.res.headers;
      const policies = [requestsPolicy(state.remainingPoints, Math.ceil(state.msBeforeNext / 1000)), ...(await costPolicy(note))];
      for (const [name, value] of Object.entries(rateLimitHeaders(policies))) headers.set(name, value);
    },
    async refusalFor(client) {
      const state = await consume(client);
      return 'retryAfter' in state ? tooMany(state.retryAfter) : undefined;
    },
  };
}
