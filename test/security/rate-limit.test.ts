import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/tokens.js';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import {
  type Answer,
  bearer,
  databaseState,
  expectRefusal,
  type GraphQLAnswer,
  postGraphQL,
} from '../support/http.js';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { restClient } from '../support/rest.js';
import { connectWebSocket } from '../support/subscriptions.js';

/**
 * The rate limit in one gateway (in memory): per client, which is the token's
 * subject, else the client's address. Every counted answer carries RateLimit
 * and RateLimit-Policy; over the limit it is 429 with Retry-After and the
 * Error body, and nothing behind it runs. Then the same limit shared through
 * Redis by two gateway processes, and each process on its own while Redis is
 * away.
 */

const LIMIT = 3;
const gateway = useTestGateway({ limits: { rateLimit: { requests: LIMIT, windowSeconds: 60 } } });
const brief = useTestGateway({ limits: { rateLimit: { requests: 2, windowSeconds: 1 } } });
const fiveAMinute = { requests: 5, windowSeconds: 60 };
const fiveAMinuteGateway = useTestGateway({ limits: { rateLimit: fiveAMinute } });
const rest = restClient(gateway);

const typename = { query: '{ __typename }' };

function expectCounted(answer: Answer<GraphQLAnswer>, remaining: number, limit = LIMIT, window = 60) {
  expect(answer.status, answer.text).toBe(200);
  // The request count's policy, then the cost budget's (test/security/demand-control.test.ts).
  expect(answer.headers.get('ratelimit-policy')).toMatch(new RegExp(`^"requests";q=${limit};w=${window}, "cost";q=\\d+;w=\\d+$`));
  expect(answer.headers.get('ratelimit')).toMatch(new RegExp(`^"requests";r=${remaining};t=\\d+, "cost";r=\\d+;t=\\d+$`));
}

function expectLimited(answer: Answer<GraphQLAnswer>, graphql = true, limit = LIMIT, window = 60) {
  expectRefusal(answer, 'RATE_LIMITED', 429, graphql);
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(window);
  expect(answer.headers.get('ratelimit')).toMatch(new RegExp(`^"requests";r=0;t=${retryAfter}, "cost";r=\\d+;t=\\d+$`));
  expect(answer.headers.get('ratelimit-policy')).toMatch(new RegExp(`^"requests";q=${limit};w=${window}, "cost";q=\\d+;w=\\d+$`));
  expect(answer.body.message).toBe(`Too many requests; try again in ${retryAfter} s.`);
}

/** POST /graphql anonymously from a given local address (any 127.x.y.z reaches the gateway). */
function fromAddress(
  localAddress: string,
  baseUrl: string,
  headers: Record<string, string> = {},
): Promise<Answer<GraphQLAnswer>> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${baseUrl}/graphql`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: new Headers(response.headers as Record<string, string>),
            text,
            body: JSON.parse(text),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(typename));
  });
}

describe('the rate limit of one gateway', () => {
  it('counts each token subject on its own, whatever token it uses', async () => {
    const alice = await testToken(undefined, 'alice');
    for (let used = 1; used <= LIMIT; used++) {
      expectCounted(await postGraphQL(gateway.baseUrl, typename, bearer(alice)), LIMIT - used);
    }
    expectLimited(await postGraphQL(gateway.baseUrl, typename, bearer(alice)));
    // Another token of the same subject is the same client.
    const aliceAgain = await testToken(['orders:read'], 'alice', { expiresIn: '2h' });
    expectLimited(await postGraphQL(gateway.baseUrl, typename, bearer(aliceAgain)));
    // Another subject is not.
    expectCounted(await postGraphQL(gateway.baseUrl, typename, bearer(await testToken(undefined, 'bob'))), LIMIT - 1);
  });

  it('counts anonymous clients by address', async () => {
    for (let used = 1; used <= LIMIT; used++) {
      expectCounted(await fromAddress('127.0.0.2', gateway.baseUrl), LIMIT - used);
    }
    expectLimited(await fromAddress('127.0.0.2', gateway.baseUrl));
    expectCounted(await fromAddress('127.0.0.3', gateway.baseUrl), LIMIT - 1);
    // A token's subject is counted apart from the address it comes from.
    const carol = await testToken(undefined, 'carol');
    expectCounted(await postGraphQL(gateway.baseUrl, typename, bearer(carol)), LIMIT - 1);
  });

  it('counts requests with a refused token by address, so tokens cannot be guessed faster than the limit', async () => {
    const forged = { authorization: 'Bearer not.a.token' };
    for (let used = 1; used <= LIMIT; used++) {
      const refused = await fromAddress('127.0.0.4', gateway.baseUrl, forged);
      expectRefusal(refused, 'UNAUTHENTICATED', 401, true);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(refused.headers.get('ratelimit')).toMatch(new RegExp(`^"requests";r=${LIMIT - used};`));
    }
    expectLimited(await fromAddress('127.0.0.4', gateway.baseUrl, forged));
    // The same address without a token is the same client.
    expectLimited(await fromAddress('127.0.0.4', gateway.baseUrl));
  });

  it('counts each WebSocket operation as a request, against the same limit as HTTP', async () => {
    const gina = await testToken(undefined, 'gina');
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`, { token: gina });
    try {
      for (let used = 1; used <= LIMIT; used++) {
        expect(await connection.subscribe('{ __typename }').next()).toEqual({ data: { __typename: 'Query' } });
      }
      const over = await connection.subscribe('{ __typename }').ended;
      expect(over.kind).toBe('error');
      expect(JSON.stringify(over)).toContain('RATE_LIMITED');
      // One count: the same client over HTTP is over the limit too.
      expectLimited(await postGraphQL(gateway.baseUrl, typename, bearer(gina)));
    } finally {
      await connection.dispose();
    }
  });

  it('runs nothing for a request over the limit: no statement, no write', async () => {
    const dave = await testToken(undefined, 'dave');
    for (let used = 1; used <= LIMIT; used++) await postGraphQL(gateway.baseUrl, typename, bearer(dave));
    const before = await databaseState(gateway.prisma);
    gateway.statements.length = 0;
    const write = { query: 'mutation { createCategory(input: { name: "Too many" }) { id } }' };
    expectLimited(await postGraphQL(gateway.baseUrl, write, bearer(dave)));
    expect(gateway.statements).toEqual([]);
    expect(await databaseState(gateway.prisma)).toBe(before);
  });

  it('answers REST callers 429 as the OpenAPI document says', async () => {
    const erin = `Bearer ${await testToken(undefined, 'erin')}`;
    for (let used = 1; used <= LIMIT; used++) {
      const answer = await rest.get('/store/orders', { authorization: erin });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit')).toMatch(new RegExp(`^"requests";r=${LIMIT - used};`));
    }
    const limited = await rest.get('/store/orders', { authorization: erin });
    expectLimited({ ...limited, body: limited.body as GraphQLAnswer }, false);
    expect(Object.keys(limited.body as object).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  });

  it('lets a client in again once its window has passed', { timeout: 10_000 }, async () => {
    const frank = bearer(await testToken(undefined, 'frank'));
    expectCounted(await postGraphQL(brief.baseUrl, typename, frank), 1, 2, 1);
    expectCounted(await postGraphQL(brief.baseUrl, typename, frank), 0, 2, 1);
    const limited = await postGraphQL(brief.baseUrl, typename, frank);
    expectLimited(limited, true, 2, 1);
    await new Promise((resolve) => setTimeout(resolve, Number(limited.headers.get('retry-after')) * 1000 + 100));
    expectCounted(await postGraphQL(brief.baseUrl, typename, frank), 1, 2, 1);
  });
});

describe('the rate limit headers', () => {
  let token: string;
  beforeAll(async () => {
    token = await testToken([], 'rate-1');
  });

  it('tells every answer, GraphQL and REST, what is left, and refuses the request over the limit with 429', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < fiveAMinute.requests; i++) {
      const response =
        i % 2 === 0
          ? await fetch(`${fiveAMinuteGateway.baseUrl}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify(typename),
            })
          : await fetch(`${fiveAMinuteGateway.baseUrl}/pets/1`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      expect(response.headers.get('ratelimit-policy')).toMatch(new RegExp(`^"requests";q=${fiveAMinute.requests};w=${fiveAMinute.windowSeconds}, "cost";`));
      remaining.push(/"requests";r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1] ?? '?');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refused = await fetch(`${fiveAMinuteGateway.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(typename),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"requests";r=0;/);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });
});

describe('rate limits shared through Redis (REDIS_URL)', () => {
  let databaseUrl: string;
  beforeAll(async () => {
    databaseUrl = (await migratedDatabase()).url;
  });
  afterAll(async () => {
    stopAll();
    await cleanUp();
  });

  /** A gateway process (`tsx src/main.ts`) on this block's database. */
  async function start(settings: Record<string, string>): Promise<{ gateway: GatewayProcess; baseUrl: string }> {
    const gateway = await startProcess(databaseUrl, settings);
    return { gateway, baseUrl: gateway.baseUrl };
  }
  const stop = (gateway: GatewayProcess) => gateway.stop();

  const REDIS_URL = 'redis://127.0.0.1:6379';
  const secret = 'a-shared-secret-for-two-gateway-processes';
  // A key prefix of its own (RATE_LIMIT_KEY_PREFIX): whatever else uses this Redis counts apart.
  const keyPrefix = `test-rate:${randomUUID()}`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const subject = 'redis-tester';

  afterAll(async () => {
    const keys = await redis.keys(`${keyPrefix}:*`).catch(() => [] as string[]);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('counts one client once across two gateway processes, by subject and by address', { timeout: 120_000 }, async () => {
    const settings = {
      AUTH_JWT_SECRET: secret,
      REDIS_URL,
      RATE_LIMIT_REQUESTS: '4',
      RATE_LIMIT_WINDOW_SECONDS: '60',
      RATE_LIMIT_KEY_PREFIX: keyPrefix,
    };
    const [first, second] = await Promise.all([start(settings), start(settings)]);
    const token = await mintToken(new TextEncoder().encode(secret), { subject, scopes: [], expiresIn: '5m' });
    const typename = { query: '{ __typename }' };

    for (const headers of [bearer(token), {}]) {
      // Two requests on each: in memory each process would allow four.
      const remaining: string[] = [];
      for (const baseUrl of [first.baseUrl, second.baseUrl, first.baseUrl, second.baseUrl]) {
        const answer = await postGraphQL(baseUrl, typename, headers);
        expect(answer.status).toBe(200);
        remaining.push(answer.headers.get('ratelimit')!.match(/"requests";r=(\d+)/)![1]!);
      }
      expect(remaining).toEqual(['3', '2', '1', '0']);
      for (const baseUrl of [first.baseUrl, second.baseUrl]) {
        const limited = await postGraphQL(baseUrl, typename, headers);
        expectRefusal(limited, 'RATE_LIMITED', 429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    // The counters are in Redis, under the prefix: one for the subject, one for the address.
    await redis.connect();
    expect(Number(await redis.get(`${keyPrefix}:sub:${subject}`))).toBeGreaterThanOrEqual(4);
    expect(Number(await redis.get(`${keyPrefix}:ip:127.0.0.1`))).toBeGreaterThanOrEqual(4);
    // Another client is counted apart.
    const other = await mintToken(new TextEncoder().encode(secret), { subject: 'someone-else', scopes: [], expiresIn: '5m' });
    expect((await postGraphQL(second.baseUrl, typename, bearer(other))).status).toBe(200);
    await Promise.all([stop(first.gateway), stop(second.gateway)]);
  });

  it("counts a busy client's requests a share at a time, never past its limit across two processes", { timeout: 120_000 }, async () => {
    const limit = 600;
    const settings = {
      AUTH_JWT_SECRET: secret,
      REDIS_URL,
      RATE_LIMIT_REQUESTS: String(limit),
      RATE_LIMIT_WINDOW_SECONDS: '60',
      RATE_LIMIT_KEY_PREFIX: keyPrefix,
    };
    const [first, second] = await Promise.all([start(settings), start(settings)]);
    const busy = 'busy-client';
    const counter = `${keyPrefix}:sub:${busy}`;
    const token = await mintToken(new TextEncoder().encode(secret), { subject: busy, scopes: [], expiresIn: '5m' });
    // Every call Redis answers on this client's counter, whichever process sends it.
    const watcher = new Redis(REDIS_URL);
    const monitor = await watcher.monitor();
    let counterCalls = 0;
    let readBack: () => void = () => {};
    const readSeen = new Promise<void>((resolve) => (readBack = resolve));
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (!args.includes(counter)) return;
      const command = args[0]?.toLowerCase();
      // The test's own read, after every request was answered: by then every call before it is told.
      if (command === 'get') readBack();
      // A call of the limiter's script (MONITOR also tells the commands the script runs).
      else if (command === 'evalsha' || command === 'eval') counterCalls += 1;
    });
    try {
      // Ten requests at a time on each process, 160 more than the limit in all.
      const requests = limit + 160;
      const statuses: number[] = [];
      const remaining: number[] = [];
      let sent = 0;
      const client = async (baseUrl: string) => {
        while (sent < requests) {
          sent += 1;
          const answer = await postGraphQL(baseUrl, typename, bearer(token));
          statuses.push(answer.status);
          if (answer.status === 200) remaining.push(Number(answer.headers.get('ratelimit')!.match(/"requests";r=(\d+)/)![1]));
          else expectRefusal(answer, 'RATE_LIMITED', 429);
        }
      };
      await Promise.all([first.baseUrl, second.baseUrl].flatMap((baseUrl) => Array.from({ length: 10 }, () => client(baseUrl))));
      const admitted = statuses.filter((status) => status === 200).length;
      // Never past the limit; refused early by no more than the two processes' unused shares (32 each at most).
      expect(admitted).toBeLessThanOrEqual(limit);
      expect(admitted).toBeGreaterThanOrEqual(limit - 2 * 32);
      expect(statuses.length - admitted).toBeGreaterThanOrEqual(160);
      expect(Math.max(...remaining)).toBeLessThan(limit);
      if (redis.status === 'wait') await redis.connect();
      // Counted in Redis: every request, and what the shares hold unused.
      expect(Number(await redis.get(counter))).toBeGreaterThanOrEqual(limit);
      await readSeen;
      // Every refused request is a call to Redis; the admitted ones come two or more to a call
      // (one each, without shares), fewer as the limit nears and shares shrink.
      expect(counterCalls - (statuses.length - admitted)).toBeLessThan(admitted / 2);
    } finally {
      monitor.disconnect();
      watcher.disconnect();
      await Promise.all([stop(first.gateway), stop(second.gateway)]);
    }
  });

  it('keeps answering, counting per process, while Redis cannot be reached', { timeout: 60_000 }, async () => {
    const { gateway, baseUrl } = await start({
      AUTH_JWT_SECRET: secret,
      REDIS_URL: 'redis://127.0.0.1:9',
      RATE_LIMIT_REQUESTS: '2',
      RATE_LIMIT_KEY_PREFIX: keyPrefix,
    });
    const token = await mintToken(new TextEncoder().encode(secret), { subject: 'offline', scopes: [], expiresIn: '5m' });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await postGraphQL(baseUrl, { query: '{ __typename }' }, bearer(token)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    await stop(gateway);
  });
});
