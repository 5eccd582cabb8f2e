import { afterEach, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { arrangePets } from '../support/operations.js';
import { postGraphQL } from '../support/http.js';
import { connectWebSocket, subscribeSse, type TestSubscription, waitFor } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * Live queries are limited per connection, per client and per instance, each
 * a setting; one over a limit is refused with RATE_LIMITED (429) naming the
 * setting, in the error shape of any other refusal, and the place comes back
 * when a live query ends. A burst of writes gives one run within the minimum
 * interval (LIVE_QUERY_MIN_INTERVAL_MS, 2 s here).
 */

const gateway = useTestGateway({ liveQueries: { maxPerConnection: 2, maxPerClient: 3, maxPerInstance: 4, minIntervalMs: 2_000 } });
const LIVE = 'query @live { categories { totalCount } }';
const graphqlUrl = () => `${gateway.baseUrl}/graphql`;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
  await waitFor(async () => (await openLive()) === 0, 'every live query to end');
});

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  return Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1]);
}
const openLive = () => metric('petstore_live_queries');

async function sse(subject: string) {
  const subscription = await subscribeSse(graphqlUrl(), LIVE, { token: await testToken([], subject) });
  open.push(subscription);
  return subscription;
}

async function expectLive(subscription: TestSubscription) {
  expect((await subscription.next()).data).toEqual({ categories: { totalCount: expect.any(Number) } });
}

async function expectRefused(subscription: TestSubscription, limit: string) {
  const result = await subscription.next();
  expect(result.data ?? null).toBeNull();
  expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429, limit });
  expect(result.errors?.[0]?.message).toContain(`the limit is the setting ${limit}`);
  expect(await subscription.ended).toEqual({ kind: 'complete' });
}

describe('live query limits', () => {
  it('per WebSocket connection: LIVE_QUERY_MAX_PER_CONNECTION, and the connection serves on', async () => {
    const connection = await connectWebSocket(graphqlUrl(), { token: await testToken([], 'connection-limit') });
    open.push({ close: () => connection.dispose() });
    const first = connection.subscribe(LIVE);
    const second = connection.subscribe(LIVE);
    await expectLive(first);
    await expectLive(second);
    await expectRefused(connection.subscribe(LIVE), 'LIVE_QUERY_MAX_PER_CONNECTION');
    // An ordinary query on the same connection is still answered; and an ended live query frees its place.
    expect(await connection.subscribe('{ categories { totalCount } }').next()).toMatchObject({ data: { categories: {} } });
    await first.close();
    await waitFor(async () => (await openLive()) === 1, 'the closed live query to end on the server');
    await expectLive(connection.subscribe(LIVE));
  });

  it('per client (token subject): LIVE_QUERY_MAX_PER_CLIENT, whatever the connection', async () => {
    for (let i = 0; i < 3; i++) await expectLive(await sse('client-limit'));
    await expectRefused(await sse('client-limit'), 'LIVE_QUERY_MAX_PER_CLIENT');
    // Another client is not counted with it.
    await expectLive(await sse('someone-else'));
  });

  it('per instance: LIVE_QUERY_MAX_PER_INSTANCE', async () => {
    for (let i = 0; i < 3; i++) await expectLive(await sse('instance-a'));
    await expectLive(await sse('instance-b'));
    await expectRefused(await sse('instance-c'), 'LIVE_QUERY_MAX_PER_INSTANCE');
  });

  it('over plain HTTP (no event stream asked for), a live query is answered once, as a query', async () => {
    const answer = await postGraphQL(gateway.baseUrl, { query: LIVE });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: { categories: { totalCount: expect.any(Number) } } });
    expect(await openLive()).toBe(0);
  });
});

describe('a burst of writes', () => {
  it('is answered by one run per live query within the minimum interval, with the last write\'s state', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 1);
    const petId = pets[0]!.id;
    const subscription = await subscribeSse<{ pet: { inventory: { quantity: number } } }>(
      graphqlUrl(),
      'query ($id: ID!) @live { pet(id: $id) { inventory { quantity } } }',
      { variables: { id: petId }, token: await testToken([], 'burst') },
    );
    open.push(subscription);
    expect((await subscription.next()).data).toEqual({ pet: { inventory: { quantity: 1 } } });
    const [runs, coalesced] = [await metric('petstore_live_query_reexecutions_total'), await metric('petstore_live_query_coalesced_writes_total')];
    for (let quantity = 2; quantity <= 11; quantity++) {
      const answer = await gateway.graphql('mutation ($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { quantity } }', { p: petId, q: quantity });
      expect(answer.errors).toBeUndefined();
    }
    expect((await subscription.next()).data).toEqual({ pet: { inventory: { quantity: 11 } } });
    // Ten writes inside one interval: one run (a write landing just after it would make two), the rest folded in.
    expect(await metric('petstore_live_query_reexecutions_total')).toBeLessThanOrEqual(runs + 2);
    expect(await metric('petstore_live_query_coalesced_writes_total')).toBeGreaterThanOrEqual(coalesced + 8);
  });
});
