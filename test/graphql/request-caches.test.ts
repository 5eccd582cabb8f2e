import { RequestCache } from '@pothos/plugin-scope-auth';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { builder } from '../../src/builder.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * What a request leaves behind once it is answered: Pothos keeps caches per request (scope-auth's,
 * made for every rule a request is checked against, by a plan or by a resolver) in WeakMaps keyed
 * by the GraphQL context, and they hold the context themselves. While the context still leads to
 * them, V8's young collections keep both, and with them the whole request, its HTTP objects
 * included, until a full collection: on a write, some 6 KB of each request moved to the old
 * generation (docs/performance.md, "Garbage"). So once a request is answered, its context must no
 * longer lead to the caches made for it: asked again, Pothos makes new ones.
 */

/** Each context scope-auth made a cache for since the last call, with that cache. */
const made = new Map<object, object>();
const fromContext = RequestCache.fromContext.bind(RequestCache);
vi.spyOn(RequestCache, 'fromContext').mockImplementation((context, schemaBuilder) => {
  const cache = fromContext(context, schemaBuilder);
  if (!made.has(context)) made.set(context, cache);
  return cache;
});

const gateway = useTestGateway();

let petId = '';
beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Kept' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id, inventory: { create: { quantity: 3, status: 'available' } } } });
  petId = String(pet.id);
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
});

/** The caches the request made, and how many of them its context still leads to once it is answered. */
async function cachesLeftBy(request: () => Promise<void>): Promise<{ made: number; kept: number }> {
  made.clear();
  await request();
  const kept = [...made].filter(([context, cache]) => fromContext(context as never, builder as never) === cache).length;
  return { made: made.size, kept };
}

const expectLetGo = ({ made: count, kept }: { made: number; kept: number }) => {
  expect(count).toBeGreaterThan(0);
  expect(kept).toBe(0);
};

describe("a request's caches", () => {
  it('are let go once it is answered: a write a plan answers', async () => {
    const before = await gateway.executions('plan');
    const outcome = await cachesLeftBy(async () => {
      const answer = await gateway.graphql<{ updateInventory: { quantity: number } }>(
        'mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 7 }) { petId quantity } }',
        { petId },
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.updateInventory.quantity).toBe(7);
    });
    expect(await gateway.executions('plan')).toBe(before + 1);
    expectLetGo(outcome);
  });

  it('are let go once it is answered: a write graphql-js answers', async () => {
    const before = await gateway.executions('graphql-js');
    const outcome = await cachesLeftBy(async () => {
      const answer = await gateway.graphql<{ updateInventory: { pet: { name: string } } }>(
        'mutation ($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 8 }) { quantity pet { name } } }',
        { petId },
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.updateInventory.pet.name).toBe('Rex');
    });
    expect(await gateway.executions('graphql-js')).toBe(before + 1);
    expectLetGo(outcome);
  });

  it('are let go once it is answered: a read with a rule', async () => {
    const outcome = await cachesLeftBy(async () => {
      const answer = await gateway.graphql<{ orders: { nodes: unknown[] } }>('{ orders(first: 5) { nodes { id } } }');
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.orders.nodes).toHaveLength(1);
    });
    expectLetGo(outcome);
  });

  it('are let go once it is answered: a deferred read, after its last part', async () => {
    const outcome = await cachesLeftBy(async () => {
      const response = await fetch(`${gateway.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed', ...(await gateway.authorization()) },
        body: JSON.stringify({ query: '{ orders(first: 5) { nodes { id ... @defer { quantity } } } }' }),
      });
      expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      const text = await response.text();
      expect(text).toContain('"quantity":1');
      expect(text).toContain('"hasNext":false');
    });
    expectLetGo(outcome);
  });
});
