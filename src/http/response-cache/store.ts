import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Principal } from '../../auth/scopes.js';
import type { Logger } from '../../logger.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { createWriteVersions, type SharedSnapshot, type Snapshot, withinTime, type WriteVersions } from './versions.js';

/**
 * The response cache's answers: whole GraphQL-over-HTTP answers (their
 * bytes, status and content type), kept per instance under a key made of the
 * request as sent and the caller's scope set, each with the tags it depends
 * on (dependencies.ts) and the point of the write log (versions.ts) its
 * request started at. A hit is answered before GraphQL runs at all: the
 * request is the one an earlier request sent, so it parses, validates and
 * passes the limits as that one did.
 *
 * With Redis, every answer kept is also put there for the other instances, for
 * what is left of its TTL: an instance that does not hold an answer looks for
 * it in the same round trip that reads the write log, and takes it when nothing
 * it depends on was stamped since the request that computed it started
 * (versions.ts, sinceOfShared). So a request answered by one instance is a hit
 * on every other, as on the one.
 */

export interface CachedAnswer {
  body: string;
  status: number;
  contentType: string;
  /** The operation's name, for the request log and metrics. */
  operation: string | undefined;
  tags: string[];
  since: Snapshot;
  /**
   * Where `body` says its cost (`extensions.cost`, the last thing in it): from `at` to its end but
   * the two closing braces. A hit says the caller's own budget left there, without parsing the body.
   */
  cost: { estimated: number; actual: number; at: number };
  /** When it was computed (ms since the epoch): another instance keeps it only for what is left of the TTL. */
  keptAt: number;
}

/** What is kept: an answer and what it depends on, noted by the request that computed it. */
export type NewAnswer = Omit<CachedAnswer, 'since' | 'keptAt'>;

/** `peer`: another instance's answer, found in Redis. */
export type LookupResult = 'hit' | 'peer' | 'miss' | 'outdated' | 'shared';

export type Lookup =
  | { kind: 'hit'; answer: CachedAnswer }
  /**
   * Not answered from memory: run it, then `finish` with what may be kept (undefined: nothing), and
   * whether it was a query (counted as a miss). Always call `finish`.
   */
  | { kind: 'miss'; finish(answer: NewAnswer | undefined, query: boolean): void }
  /** The write log could not be read: run it, keep nothing. */
  | { kind: 'uncached' };

export interface ResponseCacheOptions {
  /** How long an answer may be kept; a write it depends on drops it sooner. */
  ttlMs: number;
  maxEntries: number;
  /** The size of the answers kept (their bytes), least recently used dropped first. */
  maxBytes: number;
  /** With Redis, writes are stamped there (under `keyPrefix`), so every instance's answers see them, and answers are shared. */
  redis?: Redis;
  keyPrefix: string;
  logger: Pick<Logger, 'warn'>;
  /** Where its lookups, size and bounds are reported (petstore_response_cache_*, petstore_cache_*). */
  metrics?: { registry: Registry; caches: CacheMetrics };
}

export interface ResponseCache {
  /** Where writes are stamped (by the GraphQL plugin, before a mutation answers). */
  versions: WriteVersions;
  /** The key of a request: what the caller sent, and who may share its answer. */
  keyOf(request: { principal: Principal; method: string; search: string; accept: string; contentType: string; body: string }): string;
  /**
   * `candidate` is told of each answer that may be the hit (the one kept here, another instance's),
   * in the same turn as the write log is read to check it: what the caller does with Redis then (take
   * the answer's cost of a budget) goes in the same round trip. A hit is one of the answers told.
   */
  lookup(key: string, candidate?: (answer: CachedAnswer) => void): Promise<Lookup>;
}

/** How long Redis may take to tell the write log before the request goes uncached. */
const REDIS_TIMEOUT_MS = 200;

export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const versions = createWriteVersions({
    redis: options.redis,
    keyPrefix: options.keyPrefix,
    // Past any answer that could be outdated by it: one kept for its TTL by a request still running at the stamp.
    rememberMs: options.ttlMs * 2 + 60_000,
    timeoutMs: REDIS_TIMEOUT_MS,
    logger: options.logger,
    caches: options.metrics?.caches,
  });
  const entries = boundedCache<string, CachedAnswer>(
    'response_cache',
    { maxEntries: options.maxEntries, maxBytes: options.maxBytes },
    options.metrics?.caches,
    { ttlMs: options.ttlMs, sizeOf: (answer) => answer.body.length },
  );
  const running = new Map<string, { since: Snapshot; answer: Promise<CachedAnswer | undefined> }>();
  const count = options.metrics ? watch(options.metrics.registry, () => ({ entries: entries.size, bytes: entries.calculatedSize })) : () => undefined;
  const sameLog = (a: Snapshot, b: Snapshot) => a.epoch === b.epoch && a.shared === b.shared && a.local === b.local;
  const shared = options.redis ? sharedAnswers(options.redis, options, versions) : undefined;

  return {
    versions,
    // One call of crypto.hash, no Hash object: every lookup makes a key.
    keyOf: ({ principal, method, search, accept, contentType, body }) =>
      // Who may share it: the scope set, never the token nor its subject.
      hash('sha256', `${[...principal.scopes].sort().join(' ')}\0${method}\0${accept}\0${contentType}\0${search}\0${body}`, 'base64url'),

    async lookup(key, candidate) {
      const kept = entries.get(key);
      if (kept) candidate?.(kept);
      // Another instance's answer is looked for in the same round trip as the write log, when this one has none.
      const check = await versions.read(kept?.tags ?? [], kept ? undefined : shared?.keyOf(key));
      if (!check) {
        // Nothing can be shown to be current, nor kept.
        count('miss');
        return { kind: 'uncached' };
      }
      if (kept) {
        if (!check.changedSince(kept.since)) {
          count('hit');
          return { kind: 'hit', answer: kept };
        }
        entries.delete(key);
        count('outdated');
      } else if (shared && check.alongside) {
        const answer = await shared.take(check.alongside, candidate);
        if (answer) {
          entries.set(key, answer, { ttl: Math.max(1, answer.keptAt + options.ttlMs - Date.now()) });
          count('peer');
          return { kind: 'hit', answer };
        }
      }
      // The same request executing, with no write stamped since it began: its answer will do.
      const executing = running.get(key);
      if (executing && sameLog(executing.since, check.snapshot)) {
        const answer = await executing.answer;
        if (answer) {
          count('shared');
          return { kind: 'hit', answer };
        }
      }
      let settle: (answer: CachedAnswer | undefined) => void = () => undefined;
      const mine = { since: check.snapshot, answer: new Promise<CachedAnswer | undefined>((resolve) => (settle = resolve)) };
      running.set(key, mine);
      return {
        kind: 'miss',
        finish(answer, query) {
          if (query) count('miss');
          if (running.get(key) === mine) running.delete(key);
          const kept = answer && { ...answer, since: check.snapshot, keptAt: Date.now() };
          settle(kept);
          if (!kept) return;
          entries.set(key, kept);
          // Shared only what fits the bounds here: larger answers are computed wherever they are asked.
          if (entries.has(key)) shared?.put(key, kept);
        },
      };
    },
  };
}

/** An answer as another instance reads it: the shared part of its snapshot, not this instance's own sequence. */
type SharedAnswer = Omit<CachedAnswer, 'since'> & { since: SharedSnapshot };

/**
 * Answers in Redis for the other instances, each under `<keyPrefix>answer:<key>` for what is left of
 * its TTL (so Redis holds at most what every instance computed over one TTL). Putting one is not
 * waited for, and a failure only costs the other instances a hit.
 */
function sharedAnswers(redis: Redis, options: ResponseCacheOptions, versions: WriteVersions) {
  let warnedAt = 0;
  return {
    keyOf: (key: string) => `${options.keyPrefix}answer:${key}`,
    put(key: string, answer: CachedAnswer) {
      const { since, ...rest } = answer;
      const value: SharedAnswer = { ...rest, since: { epoch: since.epoch, shared: since.shared } };
      withinTime(redis.set(this.keyOf(key), JSON.stringify(value), 'PX', options.ttlMs), REDIS_TIMEOUT_MS).catch((error: unknown) => {
        if (Date.now() - warnedAt < 30_000) return;
        warnedAt = Date.now();
        options.logger.warn({ err: error }, 'Redis unreachable; answers are not shared with other instances meanwhile');
      });
    },
    /** The answer read from Redis, when it is current here: nothing it depends on stamped since it began. */
    async take(value: string, candidate?: (answer: CachedAnswer) => void): Promise<CachedAnswer | undefined> {
      let answer: SharedAnswer;
      try {
        answer = JSON.parse(value) as SharedAnswer;
      } catch {
        return undefined;
      }
      if (answer.keptAt + options.ttlMs <= Date.now()) return undefined;
      const since = versions.sinceOfShared(answer.since);
      if (!since) return undefined;
      const current = { ...answer, since };
      candidate?.(current);
      const check = await versions.read(answer.tags);
      if (!check || check.changedSince(since)) return undefined;
      return current;
    },
  };
}

/**
 * The cache's own metrics: its lookups by result, and its size (answers kept, and the bytes of their
 * JSON) read when Prometheus scrapes. Returns the counter of lookups.
 */
function watch(registry: Registry, stats: () => { entries: number; bytes: number }): (result: LookupResult) => void {
  const lookups = new Counter({
    name: 'petstore_response_cache_lookups_total',
    help:
      'GraphQL queries looked up in the response cache, by result: hit, peer (an answer another instance computed, found in Redis), miss, outdated (kept but outdated by a write, then executed), shared (the answer of an identical request executing at the time).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'petstore_response_cache_entries',
    help: 'Answers the response cache keeps right now.',
    registers: [registry],
    collect() {
      this.set(stats().entries);
    },
  });
  new Gauge({
    name: 'petstore_response_cache_bytes',
    help: 'The size of the answers the response cache keeps right now (their JSON).',
    registers: [registry],
    collect() {
      this.set(stats().bytes);
    },
  });
  return (result) => lookups.inc({ result });
}
