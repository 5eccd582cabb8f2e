import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * @defer and @stream for the slow parts of a screen, over HTTP multipart (multipart/mixed) and
 * Server-Sent Events. A deferred selection is loaded for all the rows of its list at once (the Prisma
 * plugin's batched fallback), so deferring costs one more statement, whatever the number of rows:
 * measured here for 5 and 20 rows.
 */

const gateway = useTestGateway();
// With the response cache on: an incremental answer is never cached, and is whole every time.
const cached = useTestGateway({ responseCache: { ttlMs: 60_000, maxEntries: 100, maxBytes: 10_000_000, keyPrefix: 'defer-test:' } });
// A budget that does not refill while the file runs: what each answer spent is what its budgetLeft lost.
const budgeted = useTestGateway({ limits: { costBudget: { capacity: 100_000, refillPerSecond: 0.001, onRedisFailure: 'local' } } });

beforeAll(async () => {
  for (const { prisma } of [gateway, cached, budgeted]) {
    const category = await prisma.category.create({ data: { name: 'Deferred' } });
    for (let p = 0; p < 20; p++) {
      const pet = await prisma.pet.create({ data: { name: `Pet ${p}`, categoryId: category.id } });
      await prisma.inventoryItem.create({ data: { petId: pet.id, quantity: p + 1, status: 'available' } });
    }
  }
});

type Cost = { estimated: number; actual: number; budgetLeft: number };
type Payload = {
  data?: Record<string, unknown>;
  incremental?: Array<{ data?: Record<string, unknown>; items?: unknown[]; path: Array<string | number> }>;
  hasNext?: boolean;
  errors?: unknown[];
  extensions?: { cost?: Cost };
};

/** The JSON parts of a multipart/mixed answer, in order. */
async function multipart(query: string, baseUrl = gateway.baseUrl): Promise<{ status: number; contentType: string; payloads: Payload[] }> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query }),
  });
  const contentType = response.headers.get('content-type') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1] ?? '-';
  const payloads = (await response.text())
    .split(`--${boundary}`)
    .map((part) => part.split(/\r?\n\r?\n/).slice(1).join('\n\n').trim())
    .filter((body) => body.startsWith('{'))
    .map((body) => JSON.parse(body) as Payload);
  return { status: response.status, contentType, payloads };
}

const pets = (first: number) =>
  `{ pets(first: ${first}) { nodes { name ... @defer { category { name } inventory { quantity } } } } }`;

describe('@defer', () => {
  it.each([5, 20])('sends %i pets first and their relations after, in one more statement', async (first) => {
    gateway.statements.length = 0;
    const { status, contentType, payloads } = await multipart(pets(first));
    expect(status).toBe(200);
    expect(contentType).toMatch(/^multipart\/mixed/);
    const [initial, ...rest] = payloads;
    const nodes = (initial!.data!.pets as { nodes: Array<Record<string, unknown>> }).nodes;
    expect(nodes).toHaveLength(first);
    expect(nodes[0]).toEqual({ name: 'Pet 0' });
    expect(initial!.hasNext).toBe(true);
    const deferred = rest.flatMap((payload) => payload.incremental ?? []);
    expect(deferred).toHaveLength(first);
    for (const part of deferred) {
      const index = part.path[2] as number;
      expect(part.path).toEqual(['pets', 'nodes', index]);
      expect(part.data).toEqual({ category: { name: 'Deferred' }, inventory: { quantity: index + 1 } });
    }
    expect(payloads.at(-1)!.hasNext).toBe(false);
    // The page, then the deferred selection (category and inventory) of all its rows in one more
    // statement: 2 for 5 rows and for 20 (each row loaded alone would make it 1 + rows).
    expect(gateway.statements).toHaveLength(2);
    expect(gateway.statements[1]).toMatch(/IN \(/);
  });

  it('is answered whole every time with the response cache on', async () => {
    const first = await multipart(pets(5), cached.baseUrl);
    const second = await multipart(pets(5), cached.baseUrl);
    expect(second.payloads).toEqual(first.payloads);
    expect(second.payloads.flatMap((payload) => payload.incremental ?? [])).toHaveLength(5);
  });

  it('streams a list over Server-Sent Events', async () => {
    const response = await fetch(`${gateway.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: '{ pets(first: 3) { nodes @stream(initialCount: 1) { name } } }' }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = [...text.matchAll(/event: (\w+)\ndata: ?(.*)\n/g)].map(([, event, data]) => ({ event, data }));
    const next = events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data!) as Payload);
    expect(next[0]!.data).toEqual({ pets: { nodes: [{ name: 'Pet 0' }] } });
    const streamed = next.slice(1).flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.items ?? []);
    expect(streamed).toEqual([{ name: 'Pet 1' }, { name: 'Pet 2' }]);
    expect(events.at(-1)!.event).toBe('complete');
  });
});

describe('what an incremental answer costs', () => {
  /** The cost the same selection has answered whole (application/json). */
  async function wholeCost(query: string): Promise<Cost> {
    const response = await fetch(`${budgeted.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as { errors?: unknown; extensions: { cost: Cost } };
    expect(body.errors).toBeUndefined();
    return body.extensions.cost;
  }

  it.each([
    // 50 asked, 20 there: the actual cost is below the estimate.
    ['@defer', '{ pets(first: 50) { nodes { name category { name } inventory { quantity } } } }', pets(50)],
    ['@stream', '{ pets(first: 50) { nodes { name } } }', '{ pets(first: 50) { nodes @stream(initialCount: 1) { name } } }'],
  ])('%s: the last part says the actual cost of all the parts, and that is what the budget spent', async (_directive, whole, incremental) => {
    const asWhole = await wholeCost(whole);
    const { payloads } = await multipart(incremental, budgeted.baseUrl);
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads.at(-1)!.hasNext).toBe(false);
    // Only the last part knows it: the parts before it carry no cost.
    expect(payloads.slice(0, -1).map((payload) => payload.extensions?.cost)).toEqual(payloads.slice(0, -1).map(() => undefined));
    const cost = payloads.at(-1)!.extensions!.cost!;
    expect(cost.estimated).toBe(asWhole.estimated);
    expect(cost.actual).toBe(asWhole.actual);
    expect(cost.actual).toBeLessThan(cost.estimated);
    // Spent: the actual cost, not the estimate (the budget refills by a thousandth of a point a second).
    expect(cost.budgetLeft).toBeCloseTo(asWhole.budgetLeft - cost.actual, 0);
    expect((await wholeCost(whole)).budgetLeft).toBeCloseTo(cost.budgetLeft - asWhole.actual, 0);
  });
});
