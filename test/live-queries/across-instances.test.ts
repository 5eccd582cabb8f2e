import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { arrangePets, channelPrefix, cleanUp, crowdedCategory, migratedDatabase, REDIS_URL, startProcess } from '../support/operations.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { postGraphQL, type GraphQLAnswer } from '../support/http.js';
import { connectWebSocket, type ExecutionResult, subscribeSse, type TestSubscription, waitFor } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * Two gateway processes sharing PostgreSQL and Redis: a live query on A is
 * refreshed by a write made on B, over SSE and WebSocket, and not by a write
 * it does not read. A reaches Redis through a proxy that refuses and cuts:
 * while Redis is away A does not hear B's writes; once it is back A runs every
 * live query again, so nothing stays stale after the outage.
 */

const redis = new Redis(REDIS_URL, { lazyConnect: true });
const prefix = channelPrefix();
let proxy: FaultProxy;
let database: Awaited<ReturnType<typeof migratedDatabase>>;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  await redis.connect();
  database = await migratedDatabase();
  const target = new URL(REDIS_URL);
  proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const shared = { EVENTS_CHANNEL_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: '300', REDIS_CONNECT_TIMEOUT_MS: '500' };
  [a, b] = await Promise.all([
    startProcess(database.url, { ...shared, REDIS_URL: proxy.urlFor(REDIS_URL), LOG_LEVEL: 'info' }),
    startProcess(database.url, { ...shared, REDIS_URL }),
  ]);
  await untilBothListen();
}, 120_000);

afterAll(async () => {
  stopAll();
  redis.disconnect();
  await proxy?.close();
  await cleanUp();
});

/** Both instances listen to the write notices in Redis. */
const untilBothListen = () =>
  waitFor(
    async () => Number(((await redis.pubsub('NUMSUB', `${prefix}writes`)) as unknown[])[1]) >= 2,
    'both instances to listen for writes',
    20_000,
  );

async function setStock(gateway: GatewayProcess, petId: string, quantity: number) {
  const answer = await postGraphQL<GraphQLAnswer>(
    gateway.baseUrl,
    { query: 'mutation ($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { quantity } }', variables: { p: petId, q: quantity } },
    { authorization: `Bearer ${await testToken()}` },
  );
  expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
}

type Stock = { pet: { inventory: { quantity: number } } };
const STOCK = 'query Stock($id: ID!) @live { pet(id: $id) { inventory { quantity } } }';
const quantity = (result: ExecutionResult<Stock>) => {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!.pet.inventory.quantity;
};

async function liveOn(gateway: GatewayProcess, transport: 'SSE' | 'WebSocket', petId: string): Promise<TestSubscription<Stock>> {
  if (transport === 'SSE') return subscribeSse<Stock>(gateway.url, STOCK, { variables: { id: petId } });
  const connection = await connectWebSocket(gateway.url);
  const subscription = connection.subscribe<Stock>(STOCK, { id: petId });
  return {
    ...subscription,
    close: async () => {
      await subscription.close();
      await connection.dispose();
    },
  };
}

describe.each(['SSE', 'WebSocket'] as const)('a live query on A, over %s', (transport) => {
  it('is refreshed by a write on B that touches it, and by no other', { timeout: 60_000 }, async () => {
    const { pets } = await arrangePets(database.prisma, 5, 5);
    const [pet, other] = [pets[0]!, pets[1]!];
    const subscription = await liveOn(a, transport, pet.id);
    try {
      expect(quantity(await subscription.next())).toBe(5);
      await setStock(b, pet.id, 3);
      expect(quantity(await subscription.next())).toBe(3);
      await setStock(b, other.id, 1);
      await setStock(b, pet.id, 2);
      // The next answer is the write it reads; the other pet's stock pushed nothing before it.
      expect(quantity(await subscription.next())).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(subscription.pending()).toEqual([]);
    } finally {
      await subscription.close();
    }
  });
});

describe('a live first page by name on A', () => {
  type Page = { pets: { nodes: Array<{ name: string }> } };
  /** The first `first` pets of a category by name, live on A. */
  const liveFirstPage = (categoryId: bigint, first: number) =>
    subscribeSse<Page>(a.url, 'query ($c: ID!, $first: Int!) @live { pets(first: $first, filter: { categoryId: $c }, orderBy: { field: NAME }) { nodes { id name } } }', {
      variables: { c: String(categoryId), first },
    });
  const names = (result: ExecutionResult<Page>) => result.data?.pets.nodes.map((node) => node.name);

  it('is not run again by a rename on B that lands past its rows, though nothing on B reads where renames land', { timeout: 60_000 }, async () => {
    const crowded = await crowdedCategory(database.prisma);
    const [category, far] = [crowded.category, String(crowded.far.id)];
    const subscription = await liveFirstPage(category.id, 2);
    const rename = async (name: string) => {
      const answer = await postGraphQL<GraphQLAnswer>(
        b.baseUrl,
        { query: 'mutation ($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id } }', variables: { id: far, name } },
        { authorization: `Bearer ${await testToken()}` },
      );
      expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
    };
    const runs = async () => Number(/^petstore_live_query_reexecutions_total (\d+)/m.exec(await (await fetch(`${a.baseUrl}/metrics`)).text())?.[1]);
    try {
      expect(names(await subscription.next())).toEqual(['Pet 000', 'Pet 001']);
      const before = await runs();
      // B has no response cache and no live query open; A hears its writes through Redis.
      await rename('Zzz far');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await runs()).toBe(before);
      expect(subscription.pending()).toEqual([]);
      await rename('Aaa near');
      expect(names(await subscription.next())).toEqual(['Aaa near', 'Pet 000']);
    } finally {
      await subscription.close();
    }
  });

  it('runs again on a rename told by an instance of an earlier version, which does not say where it landed', { timeout: 60_000 }, async () => {
    const category = await database.prisma.category.create({ data: { name: `live-${Date.now()}` } });
    await database.prisma.pet.create({ data: { name: 'Bbb', categoryId: category.id } });
    const unseen = await database.prisma.pet.create({ data: { name: 'Unseen', categoryId: category.id } });
    const subscription = await liveFirstPage(category.id, 1);
    try {
      expect(names(await subscription.next())).toEqual(['Bbb']);
      // Behind the gateways' backs: shown once the live query runs again.
      await database.prisma.pet.create({ data: { name: 'Aaa', categoryId: category.id } });
      // A rename of a pet of the category the page does not show, as an earlier version tells it: only the tags it knew.
      const tags = ['*:write', 'Pet:any', `Pet:${unseen.id}`, 'Pet:list:name', `Pet:list:name@categoryId=${category.id}`];
      await redis.publish(`${prefix}writes`, JSON.stringify({ from: 'an instance of an earlier version', tags }));
      expect(names(await subscription.next())).toEqual(['Aaa']);
    } finally {
      await subscription.close();
    }
  });
});

describe('when A loses Redis', () => {
  it('misses B\'s writes meanwhile, and runs every live query again once Redis is back', { timeout: 60_000 }, async () => {
    const { pets } = await arrangePets(database.prisma, 5);
    const pet = pets[0]!;
    const subscription = await liveOn(a, 'SSE', pet.id);
    try {
      expect(quantity(await subscription.next())).toBe(5);
      proxy.set('refuse');
      proxy.cut();
      await waitFor(async () => Number(((await redis.pubsub('NUMSUB', `${prefix}writes`)) as unknown[])[1]) < 2, 'A to be cut off');
      await setStock(b, pet.id, 4);
      // A's own writes still reach its own live queries.
      await setStock(a, pet.id, 6);
      expect(quantity(await subscription.next())).toBe(6);
      await setStock(b, pet.id, 7);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // B's write is not heard while Redis is away: documented, and mended below.
      expect(subscription.pending()).toEqual([]);

      proxy.set('pass');
      await untilBothListen();
      expect(quantity(await subscription.next(15_000))).toBe(7);
      // A says why it ran them all.
      const metrics = await (await fetch(`${a.baseUrl}/metrics`)).text();
      expect(Number(/^petstore_live_query_redis_recoveries_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    } finally {
      proxy.set('pass');
      await subscription.close();
    }
  });
});

describe('on shutdown', () => {
  it('every live query completes, over SSE and WebSocket, and the process exits 0', { timeout: 60_000 }, async () => {
    const leaving = await startProcess(database.url, { EVENTS_CHANNEL_PREFIX: prefix, REDIS_URL });
    const { pets } = await arrangePets(database.prisma, 5);
    const sse = await liveOn(leaving, 'SSE', pets[0]!.id);
    const ws = await liveOn(leaving, 'WebSocket', pets[0]!.id);
    await sse.next();
    await ws.next();
    const stopped = leaving.stop('SIGTERM');
    expect(await sse.ended).toEqual({ kind: 'complete' });
    expect(await ws.ended).toEqual({ kind: 'complete' });
    expect(await stopped).toEqual({ code: 0, signal: null });
  });
});
