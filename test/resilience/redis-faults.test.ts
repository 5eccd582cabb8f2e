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

describe('two instances sharing answers, when Redis did not take a write', () => {
  let database: Awaited<ReturnType<typeof migratedDatabase>>;
  let faulty: FaultProxy;
  let writer: GatewayProcess;
  let other: GatewayProcess;
  const petIds: string[] = [];

  beforeAll(async () => {
    database = await migratedDatabase();
    const category = await database.prisma.category.create({ data: { name: 'Shared answers' } });
    for (const name of ['Taken from the other', 'Renamed meanwhile']) {
      petIds.push(String((await database.prisma.pet.create({ data: { name, categoryId: category.id } })).id));
    }
    const redis = new URL(REDIS_URL);
    faulty = await startFaultProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const shared = { EVENTS_CHANNEL_PREFIX: channelPrefix(), RESPONSE_CACHE_TTL_MS: '60000', REDIS_COMMAND_TIMEOUT_MS: '300', REDIS_CONNECT_TIMEOUT_MS: '500' };
    [writer, other] = await Promise.all([
      startProcess(database.url, { ...shared, REDIS_URL: faulty.urlFor(REDIS_URL) }),
      startProcess(database.url, { ...shared, REDIS_URL }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([writer?.stop().catch(() => undefined), other?.stop().catch(() => undefined)]);
    await faulty?.close();
  });

  const nameOn = async (instance: GatewayProcess, id: string) => {
    const response = await fetch(`${instance.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($id: ID!) { pet(id: $id) { name } }', variables: { id } }),
    });
    return ((await response.json()) as { data?: { pet?: { name: string } } }).data?.pet?.name;
  };
  const peerHits = async (instance: GatewayProcess) =>
    Number(/^petstore_response_cache_lookups_total\{result="peer"\} (\d+)/m.exec(await (await fetch(`${instance.baseUrl}/metrics`)).text())?.[1] ?? 0);
  const ready = async (instance: GatewayProcess) => ((await (await fetch(`${instance.baseUrl}/readyz`)).json()) as { status: string }).status;

  it("takes no other instance's answer that its own write, unknown to Redis, has outdated", { timeout: 60_000 }, async () => {
    const [taken, renamed] = petIds as [string, string];
    await waitFor(async () => (await ready(writer)) === 'ready', 'the writer ready with Redis');
    // Sharing works: an answer the other instance computed is a hit here.
    expect(await nameOn(other, taken)).toBe('Taken from the other');
    expect(await nameOn(other, renamed)).toBe('Renamed meanwhile');
    const before = await peerHits(writer);
    expect(await nameOn(writer, taken)).toBe('Taken from the other');
    expect(await peerHits(writer)).toBe(before + 1);

    // A rename through the writer while Redis cannot hear of it: the write is answered, its stamp stays in memory.
    faulty.set('refuse');
    faulty.cut();
    const rename = await fetch(`${writer.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await testToken()}` },
      body: JSON.stringify({ query: 'mutation ($id: ID!) { updatePet(id: $id, input: { name: "After the outage" }) { name } }', variables: { id: renamed } }),
    });
    expect(((await rename.json()) as { data?: unknown }).data).toEqual({ updatePet: { name: 'After the outage' } });
    await waitFor(async () => (await ready(writer)) === 'degraded', 'the writer to see Redis away', 10_000);
    faulty.set('pass');
    await waitFor(async () => (await ready(writer)) === 'ready', 'the writer ready with Redis again', 15_000);

    // Redis holds the other instance's answer from before the rename, and no stamp of it: the writer does not take it.
    expect(await nameOn(writer, renamed)).toBe('After the outage');
    expect(await peerHits(writer)).toBe(before + 1);
  });
});
