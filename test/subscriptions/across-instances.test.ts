import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { arrangePets, channelPrefix, cleanUp, migratedDatabase, REDIS_URL, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { freePort, type GatewayProcess, stopAll } from '../support/processes.js';
import { postGraphQL, type GraphQLAnswer } from '../support/http.js';
import {
  connectWebSocket,
  type ExecutionResult,
  openSubscriptions,
  subscribeSse,
  type TestSubscription,
  untilSubscribed,
  waitFor,
  type WebSocketConnection,
} from '../support/subscriptions.js';

/**
 * Several gateway processes (`tsx src/main.ts`) on one database: with
 * REDIS_URL (the local Redis) a subscriber on one instance receives the
 * events of a write made on another, over SSE and over WebSocket; an
 * instance without Redis keeps its events to itself.
 */

const redis = new Redis(REDIS_URL, { lazyConnect: true });
const prefix = channelPrefix();
let database: Awaited<ReturnType<typeof migratedDatabase>>;
let a: GatewayProcess;
let b: GatewayProcess;
let local: GatewayProcess;

beforeAll(async () => {
  await redis.connect();
  database = await migratedDatabase();
  const shared = { REDIS_URL, EVENTS_CHANNEL_PREFIX: prefix };
  [a, b, local] = await Promise.all([
    startProcess(database.url, shared),
    startProcess(database.url, shared),
    // Same database, same prefix, no Redis: its events stay in its process.
    startProcess(database.url, { EVENTS_CHANNEL_PREFIX: prefix }),
  ]);
}, 120_000);

afterAll(async () => {
  stopAll();
  redis.disconnect();
  await cleanUp();
});

/** Waits until Redis has a subscriber on each channel (topic names after the prefix). */
async function untilRedisSubscribed(...topics: string[]) {
  await waitFor(async () => {
    const counts = await Promise.all(
      topics.map(async (topic) => Number(((await redis.pubsub('NUMSUB', `${prefix}${topic}`)) as unknown[])[1])),
    );
    return counts.every((count) => count >= 1);
  }, `Redis subscribers on ${topics.join(', ')}`);
}

async function mutate<T = Record<string, unknown>>(gateway: GatewayProcess, query: string, variables: Record<string, unknown>) {
  const answer = await postGraphQL<GraphQLAnswer<T>>(gateway.baseUrl, { query, variables }, { authorization: `Bearer ${await testToken()}` });
  expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
  return answer.body.data!;
}

const setStock = (gateway: GatewayProcess, petId: string, quantity: number) =>
  mutate(gateway, 'mutation ($petId: ID!, $q: Int!) { updateInventory(petId: $petId, input: { quantity: $q }) { quantity } }', {
    petId,
    q: quantity,
  });

const placeOrder = async (gateway: GatewayProcess, petId: string, quantity: number) =>
  (
    await mutate<{ placeOrder: { id: string } }>(
      gateway,
      'mutation ($petId: ID!, $q: Int!) { placeOrder(input: { petId: $petId, quantity: $q }) { id } }',
      { petId, q: quantity },
    )
  ).placeOrder.id;

const dataOf = <T>(result: ExecutionResult<T>): T => {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
};

interface Subscriber {
  inventory: TestSubscription<{ inventoryChanged: { petId: string; quantity: number; status: string } }>;
  petInventory: TestSubscription<{ inventoryChanged: { petId: string; quantity: number } }>;
  orders: TestSubscription<{ orderChanged: { change: string; orderId: string; petId: string } }>;
  statuses: TestSubscription<{ petStatusChanged: { petId: string; status: string; previousStatus: string } }>;
  close(): Promise<void>;
}

const queries = {
  inventory: 'subscription { inventoryChanged { petId quantity status } }',
  petInventory: 'subscription ($petId: ID) { inventoryChanged(petId: $petId) { petId quantity } }',
  orders: 'subscription { orderChanged { change orderId petId } }',
  statuses: 'subscription { petStatusChanged { petId status previousStatus } }',
};

/** The four subscriptions, on `gateway`, over SSE or WebSocket; resolves once they are live. */
async function subscribeAll(gateway: GatewayProcess, transport: 'SSE' | 'WebSocket', petId: string): Promise<Subscriber> {
  const token = await testToken([scopes.readOrders], 'subscriber');
  let connection: WebSocketConnection | undefined;
  const open = async <T>(query: string, variables?: Record<string, unknown>, withToken = false) => {
    if (transport === 'SSE') {
      return subscribeSse<T>(gateway.url, query, { variables, ...(withToken ? { token } : {}) });
    }
    connection ??= await connectWebSocket(gateway.url, { token });
    return connection.subscribe<T>(query, variables);
  };
  const subscriber = {
    inventory: await open<never>(queries.inventory),
    petInventory: await open<never>(queries.petInventory, { petId }),
    orders: await open<never>(queries.orders, undefined, true),
    statuses: await open<never>(queries.statuses),
    async close() {
      await Promise.all([this.inventory, this.petInventory, this.orders, this.statuses].map((s) => s.close()));
      await connection?.dispose();
    },
  } as Subscriber;
  await untilSubscribed(gateway.baseUrl, 4);
  await untilRedisSubscribed('inventoryChanged', `inventoryChanged:pet:${petId}`, 'orderChanged', 'petStatusChanged');
  return subscriber;
}

describe.each(['SSE', 'WebSocket'] as const)('two instances through Redis, over %s', (transport) => {
  it('a subscriber on instance A receives every event of writes made on instance B (and none from an instance without Redis)', {
    timeout: 60_000,
  }, async () => {
    const { pets } = await arrangePets(database.prisma, 5, null);
    const pet = pets[0]!;
    const unstocked = pets[1]!;
    const subscriber = await subscribeAll(a, transport, pet.id);
    try {
      // Written on the instance without Redis first: A must never hear of it.
      await setStock(local, pet.id, 6);

      // On B: stock, then an order placed, completed; another placed and cancelled; a status by hand.
      await setStock(b, pet.id, 4);
      expect(dataOf(await subscriber.inventory.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 4, status: 'AVAILABLE' });
      expect(dataOf(await subscriber.petInventory.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 4 });

      const first = await placeOrder(b, pet.id, 4);
      expect(dataOf(await subscriber.orders.next()).orderChanged).toEqual({ change: 'PLACED', orderId: first, petId: pet.id });
      expect(dataOf(await subscriber.inventory.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 0, status: 'PENDING' });
      expect(dataOf(await subscriber.petInventory.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 0 });
      expect(dataOf(await subscriber.statuses.next()).petStatusChanged).toEqual({
        petId: pet.id,
        status: 'PENDING',
        previousStatus: 'AVAILABLE',
      });

      await mutate(b, 'mutation ($id: ID!) { completeOrder(id: $id) { id } }', { id: first });
      expect(dataOf(await subscriber.orders.next()).orderChanged).toEqual({ change: 'COMPLETED', orderId: first, petId: pet.id });
      expect(dataOf(await subscriber.statuses.next()).petStatusChanged).toMatchObject({ petId: pet.id, status: 'SOLD' });
      expect(dataOf(await subscriber.inventory.next()).inventoryChanged).toMatchObject({ petId: pet.id, status: 'SOLD' });
      await subscriber.petInventory.next();

      await setStock(b, pet.id, 2);
      const second = await placeOrder(b, pet.id, 1);
      await mutate(b, 'mutation ($id: ID!) { cancelOrder(id: $id) { id } }', { id: second });
      expect(dataOf(await subscriber.orders.next()).orderChanged).toEqual({ change: 'PLACED', orderId: second, petId: pet.id });
      expect(dataOf(await subscriber.orders.next()).orderChanged).toEqual({ change: 'CANCELLED', orderId: second, petId: pet.id });

      await mutate(b, 'mutation ($id: ID!) { updatePet(id: $id, input: { status: SOLD }) { id } }', { id: unstocked.id });
      // The status changes of the stocked pet (SOLD → AVAILABLE on restock) come first, in order.
      const statuses = [];
      for (;;) {
        const event = dataOf(await subscriber.statuses.next()).petStatusChanged;
        statuses.push(event);
        if (event.petId === unstocked.id) break;
      }
      expect(statuses.at(-1)).toEqual({ petId: unstocked.id, status: 'SOLD', previousStatus: 'AVAILABLE' });
      expect(statuses.slice(0, -1).every((event) => event.petId === pet.id)).toBe(true);

      // Every stock event A received came from B: none carries the quantity written on the instance without Redis.
      const quantities = [
        ...subscriber.inventory.pending().map((r) => dataOf(r).inventoryChanged.quantity),
        ...subscriber.petInventory.pending().map((r) => dataOf(r).inventoryChanged.quantity),
      ];
      expect(quantities).not.toContain(6);
    } finally {
      await subscriber.close();
    }
  });
});

describe('the other way round', () => {
  it('a subscriber on B hears a write made on A; an instance without Redis hears only its own writes', {
    timeout: 60_000,
  }, async () => {
    const { pets } = await arrangePets(database.prisma, 1);
    const pet = pets[0]!;
    const onB = await subscribeSse<{ inventoryChanged: { petId: string; quantity: number } }>(b.url, queries.petInventory, {
      variables: { petId: pet.id },
    });
    const onLocal = await subscribeSse<{ inventoryChanged: { petId: string; quantity: number } }>(local.url, queries.petInventory, {
      variables: { petId: pet.id },
    });
    await untilSubscribed(b.baseUrl, 1);
    await untilSubscribed(local.baseUrl, 1);
    await untilRedisSubscribed(`inventoryChanged:pet:${pet.id}`);

    await setStock(a, pet.id, 21);
    expect(dataOf(await onB.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 21 });
    await setStock(local, pet.id, 22);
    expect(dataOf(await onLocal.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 22 });
    // B heard A (through Redis), not the instance without Redis.
    await setStock(a, pet.id, 23);
    expect(dataOf(await onB.next()).inventoryChanged).toEqual({ petId: pet.id, quantity: 23 });
    expect(onLocal.pending()).toEqual([]);
    await onB.close();
    await onLocal.close();
  });
});

describe('when Redis is away', () => {
  it('writes still succeed and the process stays up; the lost events are reported in the log', { timeout: 60_000 }, async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const lonely = await startProcess(database.url, { REDIS_URL: nobody, EVENTS_CHANNEL_PREFIX: prefix });
    const { pets } = await arrangePets(database.prisma, 1);
    const subscription = await subscribeSse(lonely.url, queries.petInventory, { variables: { petId: pets[0]!.id } });
    await setStock(lonely, pets[0]!.id, 3);
    // ioredis gives up on the queued PUBLISH after its retries; that must not end the process.
    await waitFor(() => /PUBLISH failed/.test(lonely.output()), 'the lost event to be logged', 20_000);
    await setStock(lonely, pets[0]!.id, 4);
    expect((await fetch(`${lonely.baseUrl}/healthz`)).status).toBe(200);
    await subscription.close();
    expect(await lonely.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(lonely.output()).not.toMatch(/Unhandled|uncaught/i);
  });
});

describe('subscribers that go away', () => {
  it('end their subscriptions on the server, and never take the process down', { timeout: 60_000 }, async () => {
    // Regression: a ponyfill stream inside Hono's response made undici throw (uncaught,
    // ending the process) when an SSE client closed its connection.
    for (let i = 0; i < 5; i++) {
      const sse = await subscribeSse(a.url, queries.statuses);
      await untilSubscribed(a.baseUrl, 1);
      await sse.close();
      await waitFor(async () => (await openSubscriptions(a.baseUrl)) === 0, 'the subscription to end on the server');
    }
    const socket = await connectWebSocket(a.url);
    socket.subscribe(queries.statuses);
    await untilSubscribed(a.baseUrl, 1);
    await socket.dispose();
    await waitFor(async () => (await openSubscriptions(a.baseUrl)) === 0, 'the WebSocket subscription to end');
    expect((await fetch(`${a.baseUrl}/healthz`)).status).toBe(200);
    expect(a.output()).not.toMatch(/ERR_INVALID_STATE|Uncaught|Unhandled/i);
  });
});
