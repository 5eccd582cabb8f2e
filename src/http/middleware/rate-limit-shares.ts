import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { BUSY_WITHIN_MS, nextShareSize } from '../share-sizes.js';

/** A request counted: what the client has left of its window, and when the window ends. */
export interface Counted {
  remainingPoints: number;
  msBeforeNext: number;
}

/** A request over the limit: the seconds to wait. */
export interface OverLimit {
  retryAfter: number;
}

/** What the limiter's refusal tells the client: whole seconds, one at least. */
export const overLimit = (refused: RateLimiterRes): OverLimit => ({ retryAfter: Math.max(1, Math.ceil(refused.msBeforeNext / 1000)) });

/** Two replies whose windows end this close together speak of the same window (one lasts a second at least). */
const SAME_WINDOW_MS = 250;

/** Points counted in Redis for this instance and not yet handed to a request. */
interface Share {
  /** Points of it not yet handed out. */
  left: number;
  /** What Redis said the client had left of its window after the last share (every share counted). */
  shared: number;
  /** The size of the last share taken. */
  size: number;
  takenAt: number;
  /** The end of the window the points were counted in: past it they are worth nothing. */
  windowEnd: number;
}

/**
 * Requests counted against a limit kept in Redis, a share of points at a time for busy clients.
 *
 * Every request of a client that is not busy is counted in Redis on its own, as the limiter
 * counts it (so small limits and quiet clients are counted exactly, across instances). A client
 * whose share ran out soon after it was taken gets a share twice as big the next time, up to
 * 32 and never more than a sixteenth of what it had left; its requests are then counted
 * in this process until the share runs out. A share's points are counted in Redis when it is
 * taken, so no instance lets a client through more than its limit in a window; what one
 * instance holds unused is not left for the others, so a busy client may be refused at most
 * that many requests early, and a share left unused when the client goes quiet or the window
 * ends is spent.
 *
 * Why: each call is a round trip to Redis, which cost a request for one pet about a sixth of
 * the gateway's CPU (docs/performance.md, "Rate limits through Redis").
 */
export function createSharedCounts(limiter: RateLimiterAbstract, options: { points: number; maxClients: number; caches?: CacheMetrics }) {
  const shares = boundedCache<string, Share>('rate_limit_shares', { maxEntries: options.maxClients }, options.caches);

  const nextSize = (share: Share | undefined, now: number) => {
    if (!share) return 1;
    const busy = share.left === 0 && now - share.takenAt < BUSY_WITHIN_MS && now < share.windowEnd;
    if (!busy) return 1;
    return nextShareSize(share.size, 1, share.shared);
  };

  return async function count(client: string): Promise<Counted | OverLimit> {
    const now = Date.now();
    const held = shares.get(client);
    if (held && held.left > 0 && now < held.windowEnd) {
      held.left -= 1;
      return { remainingPoints: held.shared + held.left, msBeforeNext: held.windowEnd - now };
    }
    const size = nextSize(held, now);
    let counted: RateLimiterRes;
    let granted = size;
    try {
      counted = await limiter.consume(client, size);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      // Counted whole, though only what was left under the limit is granted.
      granted = Math.min(size, options.points - (rejection.consumedPoints - size));
      if (granted < 1) return overLimit(rejection);
      counted = rejection;
    }
    const after = Date.now();
    const windowEnd = after + counted.msBeforeNext;
    // Shares taken by concurrent requests of the same client add up within one window (whose end
    // each reply tells within a few ms); one of the window before is worth nothing.
    const current = shares.get(client);
    const carried = current && current.windowEnd > after && Math.abs(current.windowEnd - windowEnd) < SAME_WINDOW_MS ? current.left : 0;
    const share: Share = { left: carried + granted - 1, shared: counted.remainingPoints, size, takenAt: after, windowEnd };
    shares.set(client, share);
    return { remainingPoints: share.shared + share.left, msBeforeNext: counted.msBeforeNext };
  };
}
