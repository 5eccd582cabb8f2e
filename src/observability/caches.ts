import { LRUCache } from 'lru-cache';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CacheBounds } from '../config.js';

/**
 * Every cache of the process that grows with what clients send (documents,
 * tokens, answers) is bounded by entries, and by bytes where entries differ in
 * size, and reports its size, its bounds and its evictions in /metrics as
 * `petstore_cache_*{cache="…"}`. A cache of a library that keeps its own count
 * (Prisma's query plans) reports its bound alone.
 */
export interface WatchedCache {
  readonly bounds: CacheBounds;
  /** Undefined where the library does not tell. */
  entries(): number | undefined;
  bytes?(): number;
}

export interface CacheMetrics {
  watch(name: string, cache: WatchedCache): void;
  /** An entry pushed out to stay within the bounds (`evict`), or gone at the end of its time (`expire`). */
  evicted(name: string, reason: 'evict' | 'expire'): void;
}

export function createCacheMetrics(registry: Registry): CacheMetrics {
  const caches = new Map<string, WatchedCache>();
  new Gauge({
    name: 'petstore_cache_entries',
    help: 'Entries each bounded cache holds now.',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const [name, cache] of caches) {
        const entries = cache.entries();
        if (entries !== undefined) this.set({ cache: name }, entries);
      }
    },
  });
  new Gauge({
    name: 'petstore_cache_bytes',
    help: 'The estimated size of what each cache bounded by bytes holds now.',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const [name, cache] of caches) if (cache.bytes) this.set({ cache: name }, cache.bytes());
    },
  });
  new Gauge({
    name: 'petstore_cache_max_entries',
    help: 'The most entries each cache may hold (its setting).',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const [name, cache] of caches) this.set({ cache: name }, cache.bounds.maxEntries);
    },
  });
  new Gauge({
    name: 'petstore_cache_max_bytes',
    help: 'The most bytes each cache bounded by size may hold (its setting).',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const [name, cache] of caches) {
        if (cache.bounds.maxBytes !== undefined) this.set({ cache: name }, cache.bounds.maxBytes);
      }
    },
  });
  const evictions = new Counter({
    name: 'petstore_cache_evictions_total',
    help: 'Entries each cache let go: evict (to stay within its bounds) or expire (at the end of their time).',
    labelNames: ['cache', 'reason'] as const,
    registers: [registry],
  });
  return {
    watch: (name, cache) => caches.set(name, cache),
    evicted: (name, reason) => evictions.inc({ cache: name, reason }),
  };
}

/**
 * An LRU cache within `bounds` (by `sizeOf` when bounded by bytes), reported to `metrics` as `name`;
 * `onDispose` hears of every entry that leaves it, and why.
 */
export function boundedCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  name: string,
  bounds: CacheBounds,
  metrics: CacheMetrics | undefined,
  options: {
    sizeOf?: (value: V, key: K) => number;
    ttlMs?: number;
    onDispose?: (value: V, key: K, reason: LRUCache.DisposeReason) => void;
  } = {},
): LRUCache<K, V> {
  const cache = new LRUCache<K, V>({
    max: bounds.maxEntries,
    ...(bounds.maxBytes !== undefined
      ? { maxSize: bounds.maxBytes, sizeCalculation: (value: V, key: K) => Math.max(1, Math.ceil(options.sizeOf?.(value, key) ?? 1)) }
      : {}),
    ...(options.ttlMs !== undefined ? { ttl: options.ttlMs, ttlAutopurge: false } : {}),
    dispose: (value, key, reason) => {
      if (reason === 'evict' || reason === 'expire') metrics?.evicted(name, reason);
      options.onDispose?.(value, key, reason);
    },
  });
  metrics?.watch(name, {
    bounds,
    entries: () => cache.size,
    ...(bounds.maxBytes !== undefined ? { bytes: () => cache.calculatedSize } : {}),
  });
  return cache;
}
