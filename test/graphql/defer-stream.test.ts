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

beforeAll(async () => {
  for (const { prisma } of [gateway, cached]) {
    const category = await prisma.category.create({ data: { name: 'Deferred' } });
    for (let p = 0; p < 20; p++) {
      const pet = await prisma.pet.create({ data: { name: `Pet ${p}`, categoryId: category.id } });
      await prisma.inventoryItem.create({ data: { petId: pet.id, quantity: p + 1, status: 'available' } });
    }
  }
});

type Payload = {
  data?: Record<string, unknown>;
  incremental?: Array<{ data?: Record<string, unknown>; items?: unknown[]; path: Array<string | number> }>;
  hasNext?: boolean;
  errors?: unknown[];
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
