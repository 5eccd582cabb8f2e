import { randomUUID } from 'node:crypto';
import { buildSchema, parse } from 'graphql';
import { Redis } from 'ioredis';
import { parseList } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/tokens.js';
import { createCostAnalysis } from '../../src/http/demand/analysis.js';
import { ROUTE_COSTS } from '../../src/http/transports/rest.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { useTestGateway } from '../support/gateway.js';
import { type Answer, bearer, expectRefusal, type GraphQLAnswer, postGraphQL, send } from '../support/http.js';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { stopAll } from '../support/processes.js';
import { subscribeSse } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * Demand control as a client meets it: the GraphQL Cost Directives' estimate of what an operation
 * costs (the specification's worked examples, then this schema's), refused over MAX_COST before
 * anything runs, `extensions.cost` in every answer (a plan's answer too), each client's budget
 * spent by actual cost by GraphQL and REST alike, refused with 429 THROTTLED once spent and
 * refilled at its rate, the RateLimit headers as a client library reads them, one budget for two
 * gateway processes through Redis, and what Redis being away does.
 */

describe("the specification's static analysis", () => {
  // The specification's Example 1 (its weight "2.0" as the routers' Int), and a connection sized on its fields.
  const schema = buildSchema(`
    directive @cost(weight: Int!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
    directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
    type User { name: String age: Int @cost(weight: 2) friends(first: Int, last: Int): UserPage @listSize(slicingArguments: ["first", "last"], sizedFields: ["users"]) }
    type UserPage { users: [User] total: Int }
    type Query {
      users(max: Int): [User] @listSize(slicingArguments: ["max"])
      top(n: Int @cost(weight: 3)): [User] @listSize(assumedSize: 10, slicingArguments: ["n"], requireOneSlicingArgument: false)
      anything: [User]
    }
  `);
  const analysis = createCostAnalysis(schema, { unsizedList: 7, bounds: { maxEntries: 10 } });
  const estimate = (query: string, variables: Record<string, unknown> = {}) => analysis.estimate(parse(query), undefined, variables);

  it("gives Example 2 its cost: 5 users, each an object (1) with an age (2)", () => {
    expect(estimate('query Example { users(max: 5) { age } }')).toBe(5 * (1 + 2));
    expect(estimate('query Example { users(max: 5) { name } }')).toBe(5 * 1);
    expect(estimate('query ($m: Int) { users(max: $m) { age } }', { m: 5 })).toBe(15);
  });

  it('sizes the named fields of a connection, uses the assumed size without a slicing argument, and adds argument weights', () => {
    expect(estimate('{ users(max: 2) { friends(first: 10) { total users { age } } } }')).toBe(2 * (1 + 1 + 0 + 10 * (1 + 2)));
    expect(estimate('{ top { name } }')).toBe(10 * 1);
    expect(estimate('{ top(n: 4) { name } }')).toBe(4 * (1 + 3));
    expect(estimate('{ anything { name } }')).toBe(7);
    expect(estimate('{ users(max: 3) { __typename } } ')).toBe(3);
  });

  it('refuses a missing or doubled required slicing argument, and a negative size', () => {
    expect(() => estimate('{ users { name } }')).toThrow(/users needs exactly one of its slicing arguments \(max\).*none was given/);
    expect(() => estimate('{ users(max: 1) { friends(first: 1, last: 2) { total } } }')).toThrow(/2 were given/);
    expect(() => estimate('{ users(max: -1) { name } }')).toThrow(/max of users must be a whole number of 0 or more, got -1/);
  });

  it('counts the actual cost from what an answer holds', () => {
    const query = parse('{ users(max: 5) { age friends(first: 10) { users { name } } } }');
    const data = { users: [{ age: 3, friends: { users: [{ name: 'a' }, { name: 'b' }] } }, null] };
    expect(analysis.actual(query, undefined, {}, data)).toBe(1 + 2 + 1 + 2);
    expect(analysis.actual(query, undefined, {}, null)).toBe(0);
  });
});

// A budget that does not refill within a test (for exact numbers), and one that refills in a second.
const exact = useTestGateway({ limits: { maxCost: 100, costBudget: { capacity: 120, refillPerSecond: 0.001, onRedisFailure: 'local' } } });
const cached = useTestGateway({
  responseCache: { ttlMs: 60_000, maxEntries: 100, maxBytes: 10_000_000, keyPrefix: 'unused without Redis' },
  limits: { maxCost: 20, costBudget: { capacity: 20, refillPerSecond: 0.001, onRedisFailure: 'local' } },
});
const quick = useTestGateway({ limits: { maxCost: 30, costBudget: { capacity: 30, refillPerSecond: 30, onRedisFailure: 'local' } } });

beforeAll(async () => {
  for (const { prisma } of [exact, quick, cached]) {
    const category = await prisma.category.create({ data: { name: 'Dogs' } });
    for (const name of ['Rex', 'Fido', 'Bella']) await prisma.pet.create({ data: { name, categoryId: category.id } });
  }
});

const asClient = async (subject: string) => bearer(await testToken(undefined, subject));
const threePets = '{ pets(first: 5) { nodes { id name } } }';
/** pets(first: 5) { nodes }: the connection (1) and 5 nodes (1 each) estimated; 3 pets returned. */
const threePetsCost = { estimated: 1 + 5, actual: 1 + 3 };

/** The RateLimit headers as a client reads them (RFC 9651 structured fields): each policy by name. */
function budgetHeaders(answer: Answer<unknown>) {
  const byName = (header: string) =>
    new Map(parseList(answer.headers.get(header) ?? '').map(([name, parameters]) => [String(name), Object.fromEntries(parameters)]));
  return { policy: byName('ratelimit-policy'), now: byName('ratelimit') };
}

describe('the cost of each answer', () => {
  it('carries the estimate, the actual cost and the budget left, the same on every request', async () => {
    const headers = await asClient('cost-reader');
    const first = await postGraphQL(exact.baseUrl, { query: threePets }, headers);
    expect(first.body.errors, first.text).toBeUndefined();
    expect(first.cost).toEqual({ ...threePetsCost, budgetLeft: 120 - 4 });
    // The same text again: the same cost, and its budget spent once more.
    const second = await postGraphQL(exact.baseUrl, { query: threePets }, headers);
    expect(second.cost).toEqual({ ...threePetsCost, budgetLeft: 120 - 8 });
    expect(await exact.executions('plan')).toBeGreaterThan(0);
    const { policy, now } = budgetHeaders(second);
    expect(policy.get('cost')).toEqual({ q: 120, w: Math.ceil(120 / 0.001) });
    expect(now.get('cost')?.r).toBe(112);
    expect(policy.get('requests')).toMatchObject({ q: expect.any(Number), w: 60 });
  });

  it('refuses an operation over MAX_COST before it runs, with both numbers, spending nothing', async () => {
    const headers = await asClient('too-costly');
    exact.statements.length = 0;
    const refused = await postGraphQL(exact.baseUrl, { query: '{ pets(first: 50) { nodes { id category { name } } } }' }, headers);
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions).toEqual({
      code: 'COST_LIMIT_EXCEEDED',
      status: 400,
      limit: 'MAX_COST',
      cost: { estimated: 1 + 50 * 2, max: 100 },
    });
    expect(refused.body.errors?.[0]?.message).toBe(
      "The operation's estimated cost is 101 points, over 100 per operation (the limit is the setting MAX_COST); ask for smaller pages or fewer fields.",
    );
    expect(exact.statements).toEqual([]);
    expect(budgetHeaders(refused).now.get('cost')?.r).toBe(120);
  });

  it('refuses a negative page size before it runs, and a huge one by its cost, spending nothing', async () => {
    const headers = await asClient('bad-sizes');
    const query = 'query ($n: Int) { pets(first: $n) { nodes { id } } }';
    const negative = await postGraphQL(exact.baseUrl, { query, variables: { n: -1 } }, headers);
    expect(negative.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, field: 'first' });
    const huge = await postGraphQL(exact.baseUrl, { query, variables: { n: 2_147_483_647 } }, headers);
    expect(huge.body.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', cost: { estimated: 2_147_483_648, max: 100 } });
    // Within the cost but over the page limit: refused by the page rule when it runs; nothing returned, nothing spent.
    const over = await postGraphQL(exact.baseUrl, { query: '{ pets(first: 101) { totalCount } }' }, headers);
    expect(over.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', field: 'first' });
    expect(over.cost).toEqual({ estimated: 6, actual: 0, budgetLeft: 120 });
  });
});

describe("each client's budget", () => {
  it('is spent by GraphQL and REST alike, refuses what it cannot hold with 429 THROTTLED, and never goes below zero', async () => {
    const headers = await asClient('spender');
    // 120 points: 14 answers of 4 points each (56), three pages of orders (60) and a pet (1) leave 3.
    for (let spent = 0; spent < 14 * 4; spent += 4) {
      const answer = await postGraphQL(exact.baseUrl, { query: threePets }, headers);
      expect(answer.cost?.budgetLeft, answer.text).toBe(120 - spent - 4);
    }
    const orders = await send(exact.baseUrl, '/store/orders', { headers });
    expect(orders.status, orders.text).toBe(200);
    expect(budgetHeaders(orders).now.get('cost')?.r).toBe(120 - 56 - ROUTE_COSTS.orders);
    const pet = await send(exact.baseUrl, '/pets/1', { headers });
    expect(budgetHeaders(pet).now.get('cost')?.r).toBe(120 - 56 - ROUTE_COSTS.orders - ROUTE_COSTS.pet);
    // 43 left: two more pages of orders leave 3; a third would go 17 below zero.
    for (let i = 0; i < 2; i++) expect((await send(exact.baseUrl, '/store/orders', { headers })).status).toBe(200);
    const restRefused = await send<GraphQLAnswer>(exact.baseUrl, '/store/orders', { headers });
    expectRefusal(restRefused, 'THROTTLED', 429, false);
    expect(Number(restRefused.headers.get('retry-after'))).toBeGreaterThan(1_000);
    expect(budgetHeaders(restRefused).now.get('cost')?.r).toBe(3);
    // GraphQL is refused the same way, before it runs; what is left can still be spent.
    exact.statements.length = 0;
    const refused = await postGraphQL(exact.baseUrl, { query: '{ pets(first: 5) { nodes { id category { name } } } }' }, headers);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1_000);
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'THROTTLED', status: 429, cost: { requested: 11, budgetLeft: 3 } });
    expect(exact.statements).toEqual([]);
    const cheap = await postGraphQL(exact.baseUrl, { query: '{ pet(id: "1") { name } }' }, headers);
    expect(cheap.cost).toEqual({ estimated: 1, actual: 1, budgetLeft: 2 });
    // Another client has a budget of its own.
    const other = await postGraphQL(exact.baseUrl, { query: threePets }, await asClient('someone-else'));
    expect(other.cost?.budgetLeft).toBe(116);
  });

  it('refills at its rate: refused, then answered once Retry-After has passed', { timeout: 10_000 }, async () => {
    const headers = await asClient('refilled');
    const page = '{ pets(first: 20) { nodes { id } } }';
    // 21 reserved, 4 spent (3 pets), then a second time; the third needs 21 of what is left.
    let refused: Answer<GraphQLAnswer> | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const answer = await postGraphQL(quick.baseUrl, { query: '{ pets(first: 29) { nodes { id } } }' }, headers);
      if (answer.status === 429) refused = answer;
    }
    expect(refused, 'the budget ran out').toBeDefined();
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1_000 + 100));
    const again = await postGraphQL(quick.baseUrl, { query: page }, headers);
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toBeTruthy();
  });

  it('spends a subscription\'s estimate when it subscribes', async () => {
    const token = await testToken(undefined, 'subscriber');
    const headers = bearer(token);
    const subscription = await subscribeSse(`${exact.baseUrl}/graphql`, 'subscription { inventoryChanged(petId: "1") { petId quantity } }', { token });
    expect(subscription.status).toBe(200);
    await subscription.close();
    const after = await postGraphQL(exact.baseUrl, { query: '{ pet(id: "1") { name } }' }, headers);
    // The subscription's selection: one object (1); then this lookup (1).
    expect(after.cost?.budgetLeft).toBe(120 - 1 - 1);
  });
});

describe('answers from the response cache', () => {
  it("spend the answer's actual cost of the asking client's budget, and are refused once it is spent", async () => {
    const first = await postGraphQL(cached.baseUrl, { query: threePets }, await asClient('cache-filler'));
    expect(first.cost).toEqual({ ...threePetsCost, budgetLeft: 16 });
    const reader = await asClient('cache-reader');
    cached.statements.length = 0;
    const left: number[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await postGraphQL(cached.baseUrl, { query: threePets }, reader);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.cost).toMatchObject(threePetsCost);
      left.push(answer.cost!.budgetLeft!);
    }
    expect(left).toEqual([16, 12, 8, 4, 0]);
    const refused = await postGraphQL(cached.baseUrl, { query: threePets }, reader);
    expectRefusal(refused, 'THROTTLED', 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1_000);
    // Every answer came from the cache.
    expect(cached.statements).toEqual([]);
  });

  it('are paid for once when a write has outdated them: what was taken for the kept answer goes back, the run is charged', async () => {
    const query = '{ pets(first: 5) { nodes { id name } } }  # outdated';
    expect((await postGraphQL(cached.baseUrl, { query }, await asClient('outdated-filler'))).cost).toEqual({ ...threePetsCost, budgetLeft: 16 });
    const [rex] = await cached.prisma.pet.findMany({ where: { name: 'Rex' } });
    const rename = await postGraphQL(cached.baseUrl, { query: `mutation { updatePet(id: "${rex!.id}", input: { name: "Rex" }) { name } }` }, await asClient('outdated-writer'));
    expect(rename.body.errors).toBeUndefined();
    cached.statements.length = 0;
    const reader = await asClient('outdated-reader');
    const executed = await postGraphQL(cached.baseUrl, { query }, reader);
    expect(cached.statements.length).toBeGreaterThan(0);
    expect(executed.cost).toEqual({ ...threePetsCost, budgetLeft: 20 - threePetsCost.actual });
    // Kept again, and a hit from there on: charged as one.
    cached.statements.length = 0;
    expect((await postGraphQL(cached.baseUrl, { query }, reader)).cost).toEqual({ ...threePetsCost, budgetLeft: 20 - 2 * threePetsCost.actual });
    expect(cached.statements).toEqual([]);
  });
});

describe('one budget for every instance (REDIS_URL)', () => {
  let databaseUrl: string;
  const REDIS_URL = 'redis://127.0.0.1:6379';
  const secret = 'a-shared-secret-for-two-gateway-processes';
  const keyPrefix = `test-rate:${randomUUID()}`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    databaseUrl = (await migratedDatabase()).url;
  });
  afterAll(async () => {
    stopAll();
    await cleanUp();
    const keys = await redis.keys(`${keyPrefix}:*`).catch(() => [] as string[]);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  const settings = {
    AUTH_JWT_SECRET: secret,
    REDIS_URL,
    RATE_LIMIT_KEY_PREFIX: keyPrefix,
    MAX_COST: '50',
    COST_BUDGET_CAPACITY: '50',
    COST_BUDGET_REFILL_PER_SECOND: '0.001',
  };

  it('spends one client\'s budget once across two gateway processes, and refuses on either once it is spent', { timeout: 120_000 }, async () => {
    const [first, second] = await Promise.all([startProcess(databaseUrl, settings), startProcess(databaseUrl, settings)]);
    const token = await mintToken(new TextEncoder().encode(secret), { subject: 'shared', scopes: [], expiresIn: '5m' });
    const query = '{ categories(first: 10) { nodes { id } } }';
    const left: number[] = [];
    for (const gateway of [first, second, first, second]) {
      const answer = await postGraphQL(gateway.baseUrl, { query }, bearer(token));
      expect(answer.status, answer.text).toBe(200);
      left.push(answer.cost!.budgetLeft!);
    }
    // An empty database: each answer costs the connection alone (1), after 11 were reserved.
    expect(left).toEqual([49, 48, 47, 46]);
    await redis.connect();
    expect(Number(await redis.hget(`${keyPrefix}:cost:sub:shared`, 'tokens'))).toBeCloseTo(46, 0);
    const bigger = '{ categories(first: 47) { nodes { id } } }';
    expect((await postGraphQL(second.baseUrl, { query: bigger }, bearer(token))).status).toBe(429);
    expect((await postGraphQL(first.baseUrl, { query: bigger }, bearer(token))).status).toBe(429);
    await Promise.all([first.stop(), second.stop()]);
  });

  it("spends a busy client's budget a share at a time, never past it across two processes, and loses no point", { timeout: 120_000 }, async () => {
    const capacity = 1_000;
    const sharing = { ...settings, COST_BUDGET_CAPACITY: String(capacity), RATE_LIMIT_REQUESTS: '100000' };
    const [first, second] = await Promise.all([startProcess(databaseUrl, sharing), startProcess(databaseUrl, sharing)]);
    const subject = `busy-${randomUUID()}`;
    const bucket = `${keyPrefix}:cost:sub:${subject}`;
    const token = await mintToken(new TextEncoder().encode(secret), { subject, scopes: [], expiresIn: '5m' });
    // An empty database: each answer reserves 11 points and spends 1.
    const query = { query: '{ categories(first: 10) { nodes { id } } }' };
    const watcher = new Redis(REDIS_URL);
    const monitor = await watcher.monitor();
    let bucketSteps = 0;
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = args[0]?.toLowerCase();
      if ((command === 'evalsha' || command === 'eval') && args.includes(bucket)) bucketSteps += 1;
    });
    try {
      // Four requests at a time on each process, 200 more than the budget holds.
      const requests = capacity + 200;
      let sent = 0;
      let spent = 0;
      let refused = 0;
      const client = async (baseUrl: string) => {
        while (sent < requests) {
          sent += 1;
          const answer = await postGraphQL(baseUrl, query, bearer(token));
          if (answer.status === 200) spent += answer.cost!.actual;
          else {
            expect(answer.status, answer.text).toBe(429);
            expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'THROTTLED', status: 429 });
            refused += 1;
          }
        }
      };
      await Promise.all([first.baseUrl, second.baseUrl].flatMap((baseUrl) => Array.from({ length: 4 }, () => client(baseUrl))));
      expect(spent).toBeLessThanOrEqual(capacity);
      expect(refused).toBeGreaterThanOrEqual(requests - capacity);
      // Every refusal is a step in Redis. Without shares each answer let through is two (its reservation, then
      // what it did not spend given back); with them, fewer than one, though near the end of a budget every
      // request is counted exactly.
      expect(bucketSteps - refused).toBeLessThan(requests - refused);
      // What the shares still hold goes back with each process's next request, once they have sat unused.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      for (const gateway of [first, second]) {
        const answer = await postGraphQL(gateway.baseUrl, query, bearer(token));
        if (answer.status === 200) spent += answer.cost!.actual;
      }
      if (redis.status === 'wait') await redis.connect();
      const left = Number(await redis.hget(bucket, 'tokens'));
      // Every point is spent by an answer or back in the bucket (its refill, 0.001 a second, aside).
      expect(left).toBeCloseTo(capacity - spent, 0);
    } finally {
      monitor.disconnect();
      watcher.disconnect();
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('keeps answering while Redis is away, as COST_BUDGET_ON_REDIS_FAILURE says, within the time limit', { timeout: 120_000 }, async () => {
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: 6379 });
    const through = { ...settings, REDIS_URL: proxy.urlFor(REDIS_URL), REDIS_COMMAND_TIMEOUT_MS: '300', COST_BUDGET_CAPACITY: '500' };
    const [local, refuse] = await Promise.all([
      startProcess(databaseUrl, { ...through, COST_BUDGET_ON_REDIS_FAILURE: 'local' }),
      startProcess(databaseUrl, { ...through, COST_BUDGET_ON_REDIS_FAILURE: 'refuse' }),
    ]);
    try {
      const token = await mintToken(new TextEncoder().encode(secret), { subject: `away-${randomUUID()}`, scopes: [], expiresIn: '5m' });
      const query = { query: '{ categories(first: 5) { nodes { id } } }' };
      proxy.set('freeze');
      const started = Date.now();
      const kept = await postGraphQL(local.baseUrl, query, bearer(token));
      expect(kept.status, kept.text).toBe(200);
      expect(kept.cost?.budgetLeft).toBe(499);
      const refused = await postGraphQL(refuse.baseUrl, query, bearer(token));
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
      expect(Date.now() - started).toBeLessThan(5_000);
      // A busy client's requests wait for one step of its bucket at most, not for each other's in turn.
      const together = Date.now();
      const busy = await Promise.all(Array.from({ length: 10 }, () => postGraphQL(local.baseUrl, query, bearer(token))));
      expect(busy.map((answer) => answer.status)).toEqual(Array.from({ length: 10 }, () => 200));
      expect(Date.now() - together).toBeLessThan(10 * 300);
      proxy.set('pass');
    } finally {
      await Promise.all([local.stop(), refuse.stop()]);
      await proxy.close();
    }
  });
});
