import type { MaybePromise } from '@graphql-tools/utils';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { BUSY_WITHIN_MS, nextShareSize } from '../share-sizes.js';

/** What a step of a bucket kept in Redis answers: whether it took, the points it took, and what the bucket holds after it. */
export interface Stepped {
  taken: boolean;
  granted: number;
  tokens: number;
}

/**
 * One step of a client's bucket in Redis. `take`: after `credit` points go back into the bucket,
 * takes as many as it holds up to `want`, and at least `points` (nothing when it does not hold
 * them); `adjust`: takes `points` (gives back when negative) as far as the bucket goes.
 */
export type SharedStep = (client: string, points: number, mode: 'take' | 'adjust', want: number, credit: number) => Promise<Stepped>;

/** A share untouched this long is not spent from: what is left of it goes back with the next step in Redis. */
const IDLE_MS = 1_000;

/** Points taken from a client's bucket in Redis for this instance and not yet spent. */
interface Share {
  left: number;
  /** What the bucket held after the share was taken. */
  shared: number;
  size: number;
  /** Taken bigger than the request that took it needed: the client is busy, and its give-backs stay here. */
  spare: boolean;
  usedAt: number;
}

/**
 * A cost budget kept in Redis, a share of points at a time for busy clients, as the rate limit is
 * counted (rate-limit-shares.ts).
 *
 * Every step of a client that is not busy is taken in Redis as it is (so small budgets and quiet
 * clients are counted exactly, across instances). A client that used its share within 100 ms
 * gets one twice as big the next time, up to 32 requests' estimates and never more than a
 * sixteenth of what its bucket held; its requests then take their estimates from the share and give
 * back what they did not spend into it, in this process, until it no longer holds the next
 * estimate. What is left of it then goes back into the bucket in the same step that takes the next
 * share (or the exact estimate), so the bucket decides every refusal with all of it. Requests that
 * come while a client's step is under way wait for it, once: those its share does not cover step on
 * their own, so none waits for more than one step besides its own. A share's points
 * are taken from the bucket when it is taken, so no two instances spend the same points; what one
 * instance holds is not there for the others, so a busy client may be refused up to that many points
 * early on another instance. A share left when the client goes quiet goes back with its next request.
 *
 * Why: each step is a script run in Redis and a round trip, two a request (the reservation, and
 * the give-back of what the answer did not cost) (docs/performance.md, "The budget a share at a time").
 */
export function createBudgetShares(step: SharedStep, options: { maxClients: number; caches?: CacheMetrics }) {
  const shares = boundedCache<string, Share>('cost_budget_shares', { maxEntries: options.maxClients }, options.caches);

  const nextSize = (share: Share | undefined, points: number, now: number) => {
    if (!share || now - share.usedAt >= BUSY_WITHIN_MS) return points;
    return nextShareSize(share.size, points, share.shared);
  };

  /** A share of this client to spend from now: one used within IDLE_MS. */
  const spendable = (client: string, now: number) => {
    const share = shares.get(client);
    return share && now - share.usedAt < IDLE_MS ? share : undefined;
  };

  /** Each client's step in Redis under way: its other requests wait for the share it brings rather than step beside it. */
  const stepping = new Map<string, Promise<Stepped>>();

  const take = (client: string, points: number, waited = false): MaybePromise<Stepped> => {
    const now = Date.now();
    const share = spendable(client, now);
    if (share && share.left >= points) {
      share.left -= points;
      share.usedAt = now;
      return { taken: true, granted: points, tokens: share.shared + share.left };
    }
    // Once at most: when the share it brought does not cover this request (or Redis did not answer), it steps on its own.
    const under = waited ? undefined : stepping.get(client);
    if (under) {
      const again = () => take(client, points, true);
      return under.then(again, again);
    }
    const held = shares.get(client);
    const want = nextSize(held, points, now);
    const credit = held?.left ?? 0;
    if (held) held.left = 0;
    const stepped = step(client, points, 'take', want, credit).then((answer) => {
      if (!answer.taken) return answer;
      const { granted, tokens } = answer;
      const after = Date.now();
      // What requests gave back into the share while the step was under way.
      const left = (shares.get(client)?.left ?? 0) + granted - points;
      shares.set(client, { left, shared: tokens, size: want, spare: want > points, usedAt: after });
      return { taken: true, granted: points, tokens: tokens + left };
    });
    stepping.set(client, stepped);
    const done = () => {
      if (stepping.get(client) === stepped) stepping.delete(client);
    };
    stepped.then(done, done);
    return stepped;
  };

  return {
    take: (client: string, points: number) => take(client, points),

    /** Where the client stands as this instance sees it: what a busy client's share holds counted in. */
    peek(client: string): MaybePromise<{ tokens: number }> {
      const share = spendable(client, Date.now());
      return share?.spare ? { tokens: share.shared + share.left } : step(client, 0, 'adjust', 0, 0);
    },

    adjust(client: string, points: number): MaybePromise<{ tokens: number }> {
      const now = Date.now();
      const share = spendable(client, now);
      // A busy client's give-back stays in its share; one that costs more than estimated is taken from it.
      if (share?.spare && share.left >= points) {
        share.left -= points;
        share.usedAt = now;
        return { tokens: share.shared + share.left };
      }
      return step(client, points, 'adjust', points, 0);
    },
  };
}
