import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { stampsToRead, withUntoldRanks } from '../dependency-tags/tags.js';

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
 * With Redis the sequence and the stamps live there (one script per write), so a
 * write through any instance is seen by all of them; this instance's own writes
 * are also stamped in memory, so that even a write Redis did not hear of never
 * lets this instance serve an answer from before it. Each write is also appended
 * to a log in Redis (a stream of the writes' sequence numbers and tags), which
 * every instance mirrors in memory: a lookup reads the sequence and the writes
 * this instance has not yet seen in one round trip, and checks its tags against
 * the mirror, so that what it reads grows with the writes since, not with the
 * answer's tags (a page of 50 pets depends on over a hundred). A mirror that
 * cannot vouch for a span of the log (trimmed past, a write stamped without an
 * entry) counts every answer from before that span as outdated; a read that
 * cannot bring it up to date (a new epoch, more entries than one read takes)
 * reads the stamps themselves, as before the log.
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
  /** Before every Redis key: `<prefix>epoch`, `<prefix>seq`, `<prefix>log`, `<prefix>tag:<tag>`. */
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

/**
 * KEYS: epoch, sequence, log, each tag's stamp; ARGV: how long stamps live (ms), a new epoch, the log's length, the
 * tags (JSON). A sequence that starts again (its key lost while the epoch's was kept: evicted, deleted) starts a new
 * epoch too, or its low numbers would pass for older than the answers kept.
 */
const STAMP = `
local sequence = redis.call('INCR', KEYS[2])
if sequence == 1 or redis.call('SET', KEYS[1], ARGV[2], 'NX') then
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('DEL', KEYS[3])
end
for i = 4, #KEYS do redis.call('SET', KEYS[i], sequence, 'PX', ARGV[1]) end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 's', sequence, 't', ARGV[4])
return sequence`;

/** KEYS: epoch, sequence, log, then the key read alongside, if any; ARGV: the last log entry seen, how many entries at most. */
const READ_LOG = `
local values = redis.call('MGET', KEYS[1], KEYS[2], KEYS[4] or KEYS[1])
local entries = redis.call('XREAD', 'COUNT', ARGV[2], 'STREAMS', KEYS[3], ARGV[1])
return {values, entries}`;

/** Writes the log keeps (about; Redis trims it in whole nodes), and the most one read takes. */
const LOG_LENGTH = 10_000;
const LOG_READ_MAX = 20_000;
/** The id before every entry's: a read after it takes the log from its start. */
const LOG_START = '0-0';

/** One entry of the log as XREAD answers it: its id, and its fields (`s` the sequence number, `t` the tags as JSON). */
type LogEntry = [id: string, fields: string[]];
type LogReply = [values: Array<string | null>, streams: Array<[key: string, entries: LogEntry[]]> | null];

type WriteLogRedis = Redis & {
  petstoreReadWriteLog(...args: Array<string | number>): Promise<LogReply>;
};

export function createWriteVersions(options: WriteVersionsOptions): WriteVersions {
  const { redis, keyPrefix, rememberMs, timeoutMs, logger } = options;
  let local = 0;
  const localStamps = keptStamps('response_cache_stamps', options.maxLocalStamps ?? 100_000, rememberMs, options.caches);
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
  const changedLocally = (tags: readonly string[], since: number) => localStamps.changedAfter(tags, since);

  if (!redis) {
    return {
      async read(tags) {
        const snapshot = { epoch: '', shared: 0, local };
        return { snapshot, changedSince: (since) => changedLocally(tags, since.local) };
      },
      async stamp(tags) {
        local += 1;
        for (const tag of tags) localStamps.stamp(tag, local);
      },
      // Without Redis there are no other instances' answers.
      sinceOfShared: () => undefined,
    };
  }
  // This instance's stamps not yet taken by Redis, and when Redis last failed to take one.
  const stamping = new Set<number>();
  let unsharedAt = -Infinity;
  const logKey = `${keyPrefix}log`;
  const logRedis = redis as WriteLogRedis;
  if (typeof logRedis.petstoreReadWriteLog !== 'function') logRedis.defineCommand('petstoreReadWriteLog', { lua: READ_LOG });
  const mirror = writeLogMirror(options.maxLocalStamps ?? 100_000, rememberMs, options.caches);

  /** The stamps themselves: what a lookup reads when the mirror cannot be brought up to date. */
  const readStamps = async (tags: readonly string[], snapshot: Snapshot, alongside: string | null | undefined): Promise<TagCheck | undefined> => {
    let values: Array<string | null>;
    try {
      values = await bounded(redis.mget(epochKey, ...stampsToRead(tags).map(tagKey)));
    } catch (error) {
      warn(error, 'Redis unreachable; answering without the response cache');
      return undefined;
    }
    const stamps = values.slice(1);
    return {
      snapshot,
      changedSince: (since) =>
        since.epoch !== snapshot.epoch ||
        values[0] !== snapshot.epoch ||
        changedLocally(tags, since.local) ||
        stamps.some((value) => Number(value ?? 0) > since.shared),
      ...(alongside === undefined ? {} : { alongside }),
    };
  };

  /** The log's entries after `after`, with the epoch and sequence, brought into the mirror; the stamps when they cannot be. */
  const readLog = async (tags: readonly string[], alongside: string | undefined, after: string): Promise<TagCheck | undefined> => {
    let reply: LogReply;
    try {
      const keys = alongside === undefined ? [epochKey, sequenceKey, logKey] : [epochKey, sequenceKey, logKey, alongside];
      reply = await bounded(logRedis.petstoreReadWriteLog(keys.length, ...keys, after, LOG_READ_MAX));
    } catch (error) {
      warn(error, 'Redis unreachable; answering without the response cache');
      return undefined;
    }
    const [values, streams] = reply;
    const snapshot = { epoch: values[0] ?? '', shared: Number(values[1] ?? 0), local };
    const found = alongside === undefined ? undefined : (values[2] ?? null);
    const mirrored = mirror.take(snapshot.epoch, snapshot.shared, after, streams?.[0]?.[1] ?? []);
    if (!mirrored) return readStamps(tags, snapshot, found);
    return {
      snapshot,
      changedSince: (since) =>
        since.epoch !== snapshot.epoch || changedLocally(tags, since.local) || mirror.changedSince(tags, since.shared),
      ...(found === undefined ? {} : { alongside: found }),
    };
  };
  // The read taking the log from its start (the first of an epoch: up to LOG_LENGTH entries), while it
  // is on its way. Lookups that come meanwhile wait for it, then read only what came after: at start-up
  // under load, each would otherwise take the whole log.
  let catchingUp: Promise<void> | undefined;

  return {
    async read(tags, alongside) {
      // Once at most: should it fail (Redis away), lookups are not queued behind one another's timeouts.
      if (catchingUp) await catchingUp;
      const after = mirror.lastId;
      const reading = readLog(tags, alongside, after);
      if (after === LOG_START) {
        const caughtUp = () => {
          catchingUp = undefined;
        };
        catchingUp = reading.then(caughtUp, caughtUp);
      }
      return reading;
    },
    async stamp(tags) {
      local += 1;
      const mine = local;
      for (const tag of tags) localStamps.stamp(tag, mine);
      stamping.add(mine);
      try {
        await bounded(
          redis.eval(
            STAMP,
            tags.size + 3,
            epochKey,
            sequenceKey,
            logKey,
            ...[...tags].map(tagKey),
            String(rememberMs),
            randomUUID(),
            String(LOG_LENGTH),
            JSON.stringify([...tags]),
          ),
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

/**
 * The newest stamp of each tag, kept in memory within `maxEntries` for `rememberMs` (past any answer a
 * stamp could outdate). A stamp pushed out before its time may still outdate an answer: every tag not
 * found then counts as written at the newest stamp let go that way, so forgetting costs hits, never
 * staleness.
 */
function keptStamps(name: string, maxEntries: number, rememberMs: number, caches: CacheMetrics | undefined) {
  let forgottenAt = 0;
  const stamps = boundedCache<string, number>(name, { maxEntries }, caches, {
    ttlMs: rememberMs,
    onDispose: (stamp, _tag, reason) => {
      if (reason === 'evict') forgottenAt = Math.max(forgottenAt, stamp);
    },
  });
  return {
    stamp(tag: string, stamp: number) {
      stamps.set(tag, Math.max(stamps.get(tag) ?? 0, stamp));
    },
    /** Whether any of `tags` was stamped after `since`. */
    changedAfter: (tags: readonly string[], since: number) => tags.some((tag) => (stamps.get(tag) ?? forgottenAt) > since),
    clear() {
      stamps.clear();
      forgottenAt = 0;
    },
  };
}

/**
 * This instance's copy of the shared write log: the newest stamp of each tag written since `from`
 * (a sequence number of the epoch it holds), learned from the log's entries as lookups read them.
 * `changedSince` is conservative wherever it cannot know: an answer from before `from`, or a tag whose
 * stamp it let go to stay within its bounds, counts as outdated.
 */
function writeLogMirror(maxEntries: number, rememberMs: number, caches: CacheMetrics | undefined) {
  let epoch: string | undefined;
  // Every write after `from` up to `to` is in `stamps`.
  let from = 0;
  let to = 0;
  let lastId = LOG_START;
  const stamps = keptStamps('response_cache_write_log', maxEntries, rememberMs, caches);
  const restart = (newEpoch: string) => {
    epoch = newEpoch;
    from = 0;
    to = 0;
    lastId = LOG_START;
    stamps.clear();
  };
  /** Nothing between `to` and `sequence` will be known: answers from before `sequence` can no longer be vouched for. */
  const skipTo = (sequence: number) => {
    from = Math.max(from, sequence);
    to = Math.max(to, sequence);
  };

  return {
    /** The id of the newest entry taken: the next read asks for those after it. */
    get lastId() {
      return lastId;
    },
    /**
     * Takes the entries a read found after `after` (with the epoch and sequence read in the same
     * script). False when the mirror does not reach `sequence` for this read: a new epoch (read from
     * its start next time), or more entries than one read takes.
     */
    take(readEpoch: string, sequence: number, after: string, entries: LogEntry[]): boolean {
      if (readEpoch !== epoch) {
        // Before the first reply every read asked from the log's start; later, this read's `after` was the old epoch's.
        const first = epoch === undefined;
        restart(readEpoch);
        if (!first) return false;
      } else if (compareIds(after, lastId) < 0 && entries.length === 0) {
        // A read that started before another one moved on: what it says is known already.
        return to >= sequence;
      }
      for (const [id, fields] of entries) {
        const entrySequence = Number(fields[fields.indexOf('s') + 1]);
        // Written by any instance, perhaps of an earlier version (withUntoldRanks).
        const tags = withUntoldRanks(JSON.parse(fields[fields.indexOf('t') + 1] ?? '[]') as string[]);
        if (entrySequence > to + 1) skipTo(entrySequence - 1);
        for (const tag of tags) stamps.stamp(tag, entrySequence);
        to = Math.max(to, entrySequence);
        if (compareIds(id, lastId) > 0) lastId = id;
      }
      if (to >= sequence) return true;
      if (entries.length >= LOG_READ_MAX) return false;
      // Writes the log has no entry for (trimmed away, or stamped without one): the span is skipped.
      skipTo(sequence);
      return true;
    },
    /** Whether any of `tags` was written after `since` (a shared sequence number), as far as the mirror can tell. */
    changedSince(tags: readonly string[], since: number): boolean {
      return since < from || stamps.changedAfter(tags, since);
    },
  };
}

/** Orders two stream ids (`<ms>-<n>`). */
function compareIds(a: string, b: string): number {
  const [aMs = 0, aN = 0] = a.split('-').map(Number);
  const [bMs = 0, bN = 0] = b.split('-').map(Number);
  return aMs === bMs ? aN - bN : aMs - bMs;
}
