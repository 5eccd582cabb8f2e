import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Principal } from '../../auth/scopes.js';
import type { Logger } from '../../logger.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { createWriteVersions, type Snapshot, type WriteVersions } from './versions.js';

/**
 * The response cache's answers: whole GraphQL-over-HTTP answers (their
 * bytes, status and content type), kept per instance under a key made of the
 * request as sent and the caller's scope set, each with the tags it depends
 * on (dependencies.ts) and the point of the write log (versions.ts) its
 * request started at. A hit is answered before GraphQL runs at all: the
 * request is the one an earlier request sent, so it parses, validates and
 * passes the limits as that one did.
 */

export interface CachedAnswer {
  body: string;
  status: number;
  contentType: string;
  /** The operation's name, for the request log and metrics. */
  operation: string | undefined;
  tags: string[];
  since: Snapshot;
}

export type LookupResult = 'hit' | 'miss' | 'outdated' | 'shared';

export type Lookup =
  | { kind: 'hit'; answer: CachedAnswer }
  /**
   * Not answered from memory: run it, then `finish` with what may be kept (undefined: nothing), and
   * whether it was a query (counted as a miss). Always call `finish`.
   */
  | { kind: 'miss'; finish(answer: Omit<CachedAnswer, 'since'> | undefined, query: boolean): void }
  /** The write log could not be read: run it, keep nothing. */
  | { kind: 'uncached' };

export interface ResponseCacheOptions {
  /** How long an answer may be kept; a write it depends on drops it sooner. */
  ttlMs: number;
  maxEntries: number;
  /** The size of the answers kept (their bytes), least recently used dropped first. */
  maxBytes: number;
  /** With Redis, writes are stamped there (under `keyPrefix`), so every instance's answers see them. */
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
  lookup(key: string): Promise<Lookup>;
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

  return {
    versions,
    keyOf: ({ principal, method, search, accept, contentType, body }) =>
      createHash('sha256')
        // Who may share it: the scope set, never the token nor its subject.
        .update(`${[...principal.scopes].sort().join(' ')}\0${method}\0${accept}\0${contentType}\0${search}\0`)
        .update(body)
        .digest('base64url'),

    async lookup(key) {
      const kept = entries.get(key);
      const check = await versions.read(kept?.tags ?? []);
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
          const kept = answer && { ...answer, since: check.snapshot };
          settle(kept);
          if (kept) entries.set(key, kept);
        },
      };
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
      'GraphQL queries looked up in the response cache, by result: hit, miss, outdated (kept but outdated by a write, then executed), shared (the answer of an identical request executing at the time).',
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
