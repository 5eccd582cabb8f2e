import { Redis } from 'ioredis';

/**
 * Deletes every key under `prefix` in the Redis at `url`: what gateways sharing Redis leave behind
 * them (the response cache's write-log sequence and epoch have no expiry). Used by the bench and the
 * test suite, each of which gives its gateways a prefix of their own. Bounded in time: a Redis that
 * refuses, or does not answer within the timeouts, keeps its keys and the promise rejects (the bench's
 * clean-up warns and goes on; a test's afterAll fails, as the tests that share Redis need it up).
 */
export async function deleteKeysUnder(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { connectTimeout: 1_000, commandTimeout: 5_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1_000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}
