import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { channelPrefix, cleanUp, migratedDatabase, REDIS_URL, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { waitFor } from '../support/subscriptions.js';

/**
 * The real process with Redis behind a TCP proxy that freezes (a Redis that
 * hangs: the connection stays open, nothing answers) and refuses. The gateway
 * keeps serving within its time limits (rate limits per instance meanwhile; the
 * response cache, whose write log is in Redis, answers uncached and stamps
 * writes in memory only),
 * /readyz answers 200 `degraded` naming what is lost, the outage is logged
 * once, and all comes back by itself when Redis does.
 */

let proxy: FaultProxy;
let gateway: GatewayProcess;
let base: string;

beforeAll(async () => {
  const database = await migratedDatabase();
  const redis = new URL(REDIS_URL);
  proxy = await startFaultProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  gateway = await startProcess(database.url, {
    LOG_LEVEL: 'info',
    REDIS_URL: proxy.urlFor(REDIS_URL),
    EVENTS_CHANNEL_PREFIX: channelPrefix(),
    REDIS_COMMAND_TIMEOUT_MS: '300',
    REDIS_CONNECT_TIMEOUT_MS: '500',
    REQUEST_TIMEOUT_MS: '3000',
    RESPONSE_CACHE_TTL_MS: '60000',
  });
  base = gateway.baseUrl;
}, 60_000);

afterAll(async () => {
  await gateway?.stop().catch(() => undefined);
  await proxy?.close();
  stopAll();
  await cleanUp();
});

async function timedRead() {
  const startedAt = performance.now();
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ categories(first: 1) { totalCount } }' }),
  });
  const body = (await response.json()) as { data?: { categories: { totalCount: number } } };
  return {
    status: response.status,
    tookMs: performance.now() - startedAt,
    rateLimit: response.headers.get('ratelimit'),
    categories: body.data?.categories.totalCount,
  };
}

/** A write, which stamps the response cache's write log (in Redis, and in memory). */
async function timedWrite() {
  const startedAt = performance.now();
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await testToken()}` },
    body: JSON.stringify({
      query: 'mutation ($name: String!) { createCategory(input: { name: $name }) { id } }',
      variables: { name: `Written meanwhile ${randomUUID().slice(0, 8)}` },
    }),
  });
  const body = (await response.json()) as { errors?: unknown };
  return { status: response.status, tookMs: performance.now() - startedAt, errors: body.errors };
}

const readiness = async () => (await (await fetch(`${base}/readyz`)).json()) as { status: string; degraded?: { redis: string[] } };
const outageLines = () =>
  gateway
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; service?: string })
    .filter((line) => line.service === 'Redis');

describe('Redis behind a faulty network', () => {
  it.each([['freeze'], ['refuse']] as const)('%s: requests are served within their limits, /readyz says degraded, and it recovers', { timeout: 60_000 }, async (fault) => {
    await waitFor(async () => (await readiness()).status === 'ready', 'ready with Redis');
    const outagesBefore = outageLines().filter((line) => line.msg.startsWith('Redis unavailable')).length;
    proxy.set(fault);
    if (fault === 'refuse') proxy.cut();
    const before = await timedRead();
    for (let i = 0; i < 5; i++) {
      const answer = await timedRead();
      expect(answer.status).toBe(200);
      // Counted by the per-instance limiter meanwhile; bounded by the command timeout, far from the request limit.
      expect(answer.rateLimit).toMatch(/^"requests";r=\d+;t=\d+, "cost";r=\d+;t=\d+$/);
      expect(answer.tookMs).toBeLessThan(1_500);
    }
    // Writes are answered within their limits too, and this instance's reads see them at once.
    const written = await timedWrite();
    expect(written).toMatchObject({ status: 200, errors: undefined });
    expect(written.tookMs).toBeLessThan(1_500);
    const after = await timedRead();
    expect(after.tookMs).toBeLessThan(1_500);
    expect(after.categories).toBe((before.categories ?? 0) + 1);
    await waitFor(async () => (await readiness()).status === 'degraded', '/readyz to say degraded', 10_000);
    const degraded = await fetch(`${base}/readyz`);
    expect(degraded.status).toBe(200);
    expect((await readiness()).degraded?.redis).toContain('rate limits are counted per instance');

    proxy.set('pass');
    await waitFor(async () => (await readiness()).status === 'ready', '/readyz to say ready again', 15_000);
    // Back on the shared write log: still no answer from before the write.
    expect((await timedRead()).categories).toBe(after.categories);
    const lines = outageLines();
    expect(lines.filter((line) => line.msg.startsWith('Redis unavailable')).length - outagesBefore).toBe(1);
    expect(lines.at(-1)?.msg).toBe('Redis available again');
  });
});
