import { mapMaybePromise, type MaybePromise } from '@graphql-tools/utils';
import type { Redis } from 'ioredis';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { createBudgetShares, type SharedStep, type Stepped } from './budget-shares.js';

/**
 * Each client's budget of cost points: a token bucket that holds `capacity` points and refills at
 * `refillPerSecond`. An operation is let through when the bucket holds its estimated cost, which is
 * taken at once (so concurrent requests cannot spend the same points twice); once it has run, the
 * difference to its actual cost is given back (or, above the estimate, taken as far as the bucket
 * goes: never below zero). Shared by every instance through Redis (one Lua script, atomic, on
 * Redis' clock; a busy client's a share at a time, budget-shares.ts), in process without it.
 */

export type BudgetOnRedisFailure = 'local' | 'allow' | 'refuse';

export interface BudgetSettings {
  capacity: number;
  refillPerSecond: number;
  /** What happens while Redis does not answer within its command timeout (COST_BUDGET_ON_REDIS_FAILURE). */
  onRedisFailure: BudgetOnRedisFailure;
}

/** Where a client's bucket stands after a step. */
export interface BudgetState {
  capacity: number;
  /** Points left, rounded down. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export type Taken = BudgetState & { taken: true };
export type Refused = BudgetState & { taken: false; retryAfterSeconds: number };

/**
 * Each step answers at once when the buckets are kept in process (no promise, so a request that
 * spends its budget waits for nothing) or the step is within this instance's share of a shared
 * bucket, and when Redis has answered otherwise.
 */
export interface CostBudget {
  readonly settings: BudgetSettings;
  /** Takes `points` when the bucket holds them all; otherwise takes nothing. */
  take(client: string, points: number): MaybePromise<Taken | Refused>;
  /** Gives back (negative) or takes more (positive) points once the actual cost is known. */
  adjust(client: string, points: number): MaybePromise<BudgetState>;
  /** Where the bucket stands, taking nothing. */
  peek(client: string): MaybePromise<BudgetState>;
}

/** THROTTLED: the client's budget does not hold what the request would cost. */
export const throttled = (refused: Refused, points: number, settings: BudgetSettings) =>
  new DomainError(
    'THROTTLED',
    `This request costs ${points} points and ${refused.remaining} are left of this client's budget ` +
      `(${settings.capacity} points, refilled at ${settings.refillPerSecond} a second); try again in ${refused.retryAfterSeconds} s.`,
    undefined,
    refused.retryAfterSeconds,
    { cost: { requested: points, budgetLeft: refused.remaining } },
  );

/** A bucket's state as kept: its points (fractional) and when they were counted (ms). */
interface Bucket {
  tokens: number;
  at: number;
}

type Mode = 'take' | 'adjust';

/** The same step as the Lua script below, on a bucket kept in process: a take there takes its points, no share. */
function step(bucket: Bucket | undefined, settings: BudgetSettings, now: number, points: number, mode: Mode) {
  const { capacity, refillPerSecond } = settings;
  let tokens = bucket ? Math.min(capacity, bucket.tokens + ((now - bucket.at) * refillPerSecond) / 1000) : capacity;
  let taken = true;
  if (mode === 'take') {
    if (tokens >= points) tokens -= points;
    else taken = false;
  } else {
    tokens = Math.max(0, Math.min(capacity, tokens - points));
  }
  return { bucket: { tokens, at: now }, taken, tokens };
}

const REFILL_AND_STEP = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local points = tonumber(ARGV[3])
local mode = ARGV[4]
local want = tonumber(ARGV[5])
local credit = tonumber(ARGV[6])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local kept = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(kept[1])
local at = tonumber(kept[2])
if tokens == nil or at == nil then tokens = capacity; at = now end
tokens = math.min(capacity, tokens + (now - at) * rate / 1000 + credit)
local taken = 1
local granted = 0
if mode == 'take' then
  if tokens >= points then
    granted = math.max(points, math.min(want, math.floor(tokens)))
    tokens = tokens - granted
  else
    taken = 0
  end
else
  tokens = math.max(0, math.min(capacity, tokens - points))
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return { taken, tostring(granted), tostring(tokens) }
`;

type BudgetRedis = Redis & {
  costBudgetStep(key: string, capacity: number, rate: number, points: number, mode: Mode, want: number, credit: number): Promise<[number, string, string]>;
};

export function createCostBudget(options: {
  settings: BudgetSettings;
  redis?: Redis;
  /** Before every bucket's key in Redis. */
  keyPrefix: string;
  logger: Pick<Logger, 'warn'>;
  /** Buckets kept in process (without Redis, or while it is away with `local`). */
  maxClients: number;
  caches?: CacheMetrics;
  /** Told of each step Redis could not take, with what was done instead. */
  onRedisFailure?: (fallback: BudgetOnRedisFailure) => void;
}): CostBudget {
  const { settings } = options;
  const buckets = boundedCache<string, Bucket>('cost_budgets', { maxEntries: options.maxClients }, options.caches);
  const redis = options.redis as BudgetRedis | undefined;
  if (redis && typeof redis.costBudgetStep !== 'function') redis.defineCommand('costBudgetStep', { numberOfKeys: 1, lua: REFILL_AND_STEP });

  const stateOf = (tokens: number): BudgetState => ({
    capacity: settings.capacity,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((settings.capacity - tokens) / settings.refillPerSecond),
  });

  const local = (client: string, points: number, mode: Mode): Stepped => {
    const result = step(buckets.get(client), settings, Date.now(), points, mode);
    buckets.set(client, result.bucket);
    return { taken: result.taken, granted: result.taken ? points : 0, tokens: result.tokens };
  };

  let warned = false;
  const inRedis = (redis: BudgetRedis): SharedStep => async (client, points, mode, want, credit) => {
    try {
      const key = `${options.keyPrefix}:${client}`;
      const [taken, granted, tokens] = await redis.costBudgetStep(key, settings.capacity, settings.refillPerSecond, points, mode, want, credit);
      warned = false;
      return { taken: taken === 1, granted: Number(granted), tokens: Number(tokens) };
    } catch (error) {
      options.onRedisFailure?.(settings.onRedisFailure);
      if (!warned) {
        warned = true;
        options.logger.warn({ err: error, fallback: settings.onRedisFailure }, 'cost budgets: Redis did not answer');
      }
      if (settings.onRedisFailure === 'local') return local(client, points, mode);
      if (settings.onRedisFailure === 'allow') return { taken: true, granted: points, tokens: settings.capacity };
      throw new DomainError('UNAVAILABLE', 'Budgets cannot be checked right now; try again shortly.', undefined, 2);
    }
  };
  const shares = redis ? createBudgetShares(inRedis(redis), { maxClients: options.maxClients, caches: options.caches }) : undefined;

  return {
    settings,
    take(client, points) {
      return mapMaybePromise(shares ? shares.take(client, points) : local(client, points, 'take'), ({ taken, tokens }): Taken | Refused =>
        taken
          ? { ...stateOf(tokens), taken: true }
          : { ...stateOf(tokens), taken: false, retryAfterSeconds: Math.max(1, Math.ceil((points - tokens) / settings.refillPerSecond)) },
      );
    },
    adjust(client, points) {
      return mapMaybePromise(shares ? shares.adjust(client, points) : local(client, points, 'adjust'), ({ tokens }) => stateOf(tokens));
    },
    peek(client) {
      return mapMaybePromise(shares ? shares.peek(client) : local(client, 0, 'adjust'), ({ tokens }) => stateOf(tokens));
    },
  };
}
