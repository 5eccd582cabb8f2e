import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';

/**
 * The write log the response cache checks its answers against. Every write
 * takes the next number of a sequence and stamps each tag it changed with it
 * (src/http/dependency-tags/tags.ts). A request reads the
 * sequence when it starts; its answer is kept with that number, and served
 * later only while none of its tags carries a higher one. Since a write is
 * stamped before it answers, and commits before it is stamped, an answer
 * read before a write's commit always sees the write's stamp, and no answer
 * older than a write acknowledged before the request was sent is ever served.
 *
 * With Redis the sequence and the stamps live there (one MGET per lookup, one
 * script per write), so a write through any instance is seen by all of them;
 * this instance's own writes are also stamped in memory, so that even a write
 * Redis did not hear of never lets this instance serve an answer from before it.
 *
 * An answer another instance kept (found in Redis, store.ts) is checked against the
 * shared stamps as of that instance's snapshot, and against this instance's own
 * writes that Redis may not know of: those still being stamped there count as
 * after it, and after a stamp Redis did not take no other instance's answer is
 * used until that stamp could have outdated none (`rememberMs`).
 */

export interface Snapshot {
  /**
   * Which life of the shared log: a Redis that restarted empty starts its sequence again, and
   * answers from before must not pass for current under its new, lower numbers.
   */
  epoch: string;
  /** The shared sequence (Redis), 0 without Redis. */
  shared: number;
  /** This instance's own sequence. */
  local: number;
}

export interface TagCheck {
  snapshot: Snapshot;
  /** Whether any of the tags was stamped after `since`. */
  changedSince(since: Snapshot): boolean;
  /** The value of `alongside` (read() in the same round trip), null when Redis has none. */
  alongside?: string | null;
}

/** Where another instance's answer stands in the shared log: what its request read when it started. */
export type SharedSnapshot = Pick<Snapshot, 'epoch' | 'shared'>;

export interface WriteVersions {
  /**
   * The sequence now, and the stamps of `tags`; undefined when they cannot be known (Redis did not
   * answer). With Redis, `alongside` names one more key read in the same round trip.
   */
  read(tags: readonly string[], alongside?: string): Promise<TagCheck | undefined>;
  /** Stamps a write that changed `tags`. */
  stamp(tags: ReadonlySet<string>): Promise<void>;
  /**
   * The snapshot to check another instance's answer with, made at `shared`: its shared stamps, and
   * this instance's writes Redis may not have taken yet as after it. Undefined while a write of this
   * instance that Redis did not take could still outdate it.
   */
  sinceOfShared(shared: SharedSnapshot): Snapshot | undefined;
}

/**
 * A Redis command, failed after `timeoutMs` if it has not answered. The timer goes as soon as the
 * command settles: one left to fire for every lookup made an error (and its stack) per command.
 */
export function withinTime<T>(command: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Redis did not answer in time')), timeoutMs);
    timer.unref();
    command.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export interface WriteVersionsOptions {
  redis?: Redis;
  /** Before every Redis key: `<prefix>seq`, `<prefix>tag:<tag>`. */
  keyPrefix: string;
  /** How long a stamp must be remembered: longer than any answer it could outdate lives. */
  rememberMs: number;
  /** How long Redis may take before the request goes uncached. */
  timeoutMs: number;
  logger: Pick<Logger, 'warn'>;
  /** Tags whose stamps are remembered in memory at once; 100,000 when absent. */
  maxLocalStamps?: number;
  caches?: CacheMetrics;
}

const STAMP = `
redis.call('SET', KEYS[1], ARGV[2], 'NX')
local sequence = redis.call('INCR', KEYS[2])
for i = 3, #KEYS do redis.call('SET', KEYS[i], sequence, 'PX', ARGV[1]) end
return sequence`;

export function createWriteVersions(options: WriteVersionsOptions): WriteVersions {
  const { redis, keyPrefix, rememberMs, timeoutMs, logger } = options;
  let local = 0;
  // A stamp pushed out before its time may still outdate an answer: every tag not found then counts
  // as written at the newest stamp let go that way, so forgetting costs hits, never staleness.
  let forgottenAt = 0;
  const localStamps = boundedCache<string, number>('response_cache_stamps', { maxEntries: options.maxLocalStamps ?? 100_000 }, options.caches, {
    ttlMs: rememberMs,
    onDispose: (stamp, _tag, reason) => {
      if (reason === 'evict') forgottenAt = Math.max(forgottenAt, stamp);
    },
  });
  const sequenceKey = `${keyPrefix}seq`;
  const epochKey = `${keyPrefix}epoch`;
  const tagKey = (tag: string) => `${keyPrefix}tag:${tag}`;
  // One warning per 30 s while Redis does not answer, not one per request.
  let warnedAt = 0;
  const warn = (error: unknown, message: string) => {
    if (Date.now() - warnedAt < 30_000) return;
    warnedAt = Date.now();
    logger.warn({ err: error }, message);
  };
  const bounded = <T>(command: Promise<T>) => withinTime(command, timeoutMs);
  const changedLocally = (tags: readonly string[], since: number) =>
    tags.some((tag) => (localStamps.get(tag) ?? forgottenAt) > since);

  if (!redis) {
    return {
      async read(tags) {
        const snapshot = { epoch: '', shared: 0, local };
        return { snapshot, changedSince: (since) => changedLocally(tags, since.local) };
      },
      async stamp(tags) {
        local += 1;
        for (const tag of tags) localStamps.set(tag, local);
      },
      // Without Redis there are no other instances' answers.
      sinceOfShared: () => undefined,
    };
  }
  // This instance's stamps not yet taken by Redis, and when Redis last failed to take one.
  const stamping = new Set<number>();
  let unsharedAt = -Infinity;
  return {
    async read(tags, alongside) {
      let values: Array<string | null>;
      const extra = alongside === undefined ? [] : [alongside];
      try {
        values = await bounded(redis.mget(epochKey, sequenceKey, ...extra, ...tags.map(tagKey)));
      } catch (error) {
        warn(error, 'Redis unreachable; answering without the response cache');
        return undefined;
      }
      const snapshot = { epoch: values[0] ?? '', shared: Number(values[1] ?? 0), local };
      const stamps = values.slice(2 + extra.length);
      return {
        snapshot,
        changedSince: (since) =>
          since.epoch !== snapshot.epoch ||
          changedLocally(tags, since.local) ||
          stamps.some((value) => Number(value ?? 0) > since.shared),
        ...(alongside === undefined ? {} : { alongside: values[2] ?? null }),
      };
    },
    async stamp(tags) {
      local += 1;
      const mine = local;
      for (const tag of tags) localStamps.set(tag, mine);
      stamping.add(mine);
      try {
        await bounded(
          redis.eval(STAMP, tags.size + 2, epochKey, sequenceKey, ...[...tags].map(tagKey), String(rememberMs), randomUUID()),
        );
      } catch (error) {
        unsharedAt = Date.now();
        warn(error, 'Redis unreachable; other instances may serve cached answers from before this write until they expire');
      } finally {
        stamping.delete(mine);
      }
    },
    sinceOfShared({ epoch, shared }) {
      if (Date.now() - unsharedAt < rememberMs) return undefined;
      // A write still being stamped in Redis may be missing from the other instance's view: it counts as after.
      let settled = local;
      for (const stamp of stamping) settled = Math.min(settled, stamp - 1);
      return { epoch, shared, local: settled };
    },
  };
}
