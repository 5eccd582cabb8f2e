import { applyJSONPatch } from '@n1ru4l/graphql-live-query-patch-json-patch';
import { describe, expect, it } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { arrangePets, crowdedCategory } from '../support/operations.js';
import { connectWebSocket, type ExecutionResult, subscribeSse, waitFor } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * Queries marked @live, on one gateway, over SSE and WebSocket: the first
 * answer at once, a new one after each write that touches what it shows, none
 * after a write it does not read; the dependent lists (a name-ordered page, an
 * inventory list, a pet's orders); JSON patches; scopes and token expiry; and
 * the refusals of its limits.
 */

const gateway = useTestGateway({ liveQueries: { minIntervalMs: 50 } });

/** How long a test waits to be sure nothing more is pushed (not a bound on anything). */
const QUIET_MS = 1_000;

const dataOf = <T>(result: ExecutionResult<T>): T => {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
};

async function write(query: string, variables: Record<string, unknown>) {
  const answer = await gateway.graphql(query, variables);
  expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  return answer.data as Record<string, { id?: string }>;
}
const setStock = (petId: string, quantity: number) =>
  write('mutation ($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { quantity } }', { p: petId, q: quantity });
const rename = (id: string, name: string) => write('mutation ($id: ID!, $n: String!) { updatePet(id: $id, input: { name: $n }) { id } }', { id, n: name });

const PET = 'query Pet($id: ID!) @live { pet(id: $id) { id name inventory { quantity } } }';

async function liveCounter(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

describe.each(['SSE', 'WebSocket'] as const)('a live query over %s', (transport) => {
  async function live<T>(query: string, variables?: Record<string, unknown>, token?: string) {
    if (transport === 'SSE') return subscribeSse<T>(`${gateway.baseUrl}/graphql`, query, { variables, token });
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`, { token });
    const subscription = connection.subscribe<T>(query, variables);
    return {
      ...subscription,
      close: async () => {
        await subscription.close();
        await connection.dispose();
      },
    };
  }

  it('answers at once, then after each write that touches it, and never after one that does not', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 5, 3);
    const [pet, other] = [pets[0]!, pets[1]!];
    type Pet = { pet: { id: string; name: string; inventory: { quantity: number } } };
    const subscription = await live<Pet>(PET, { id: pet.id });
    try {
      expect(dataOf(await subscription.next())).toEqual({ pet: { id: pet.id, name: pet.name, inventory: { quantity: 5 } } });
      await setStock(pet.id, 4);
      expect(dataOf(await subscription.next()).pet.inventory).toEqual({ quantity: 4 });
      await rename(pet.id, 'Renamed live');
      expect(dataOf(await subscription.next()).pet.name).toBe('Renamed live');

      // Another pet's stock and name: nothing this answer shows.
      const pushesBefore = await liveCounter(gateway.baseUrl, 'petstore_live_query_pushes_total');
      await setStock(other.id, 9);
      await rename(other.id, 'Someone else');
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      expect(subscription.pending()).toEqual([]);
      expect(await liveCounter(gateway.baseUrl, 'petstore_live_query_pushes_total')).toBe(pushesBefore);
    } finally {
      await subscription.close();
    }
    await waitFor(async () => (await liveCounter(gateway.baseUrl, 'petstore_live_queries')) === 0, 'the live query to end on the server');
  });

  it('keeps a name-ordered page, an inventory list and a pet\'s orders current', { timeout: 30_000 }, async () => {
    const { category, pets } = await arrangePets(gateway.prisma, 2, 2, 2);
    await rename(pets[0]!.id, 'Alpha');
    await rename(pets[1]!.id, 'Bravo');
    await rename(pets[2]!.id, 'Charlie');
    const token = await testToken([scopes.readOrders]);
    type Page = { pets: { nodes: Array<{ name: string }> } };
    const page = await live<Page>(
      'query Page($c: ID!) @live { pets(first: 2, filter: { categoryId: $c }, orderBy: { field: NAME }) { nodes { name } } }',
      { c: category.id },
    );
    type Stock = { inventory: { nodes: Array<{ petId: string; quantity: number }> } };
    const stock = await live<Stock>('query Stock @live { inventory(first: 100) { nodes { petId quantity } } }');
    type Orders = { pet: { orders: { totalCount: number; nodes: Array<{ quantity: number }> } } };
    const orders = await live<Orders>(
      'query Orders($id: ID!) @live { pet(id: $id) { orders { totalCount nodes { quantity } } } }',
      { id: pets[2]!.id },
      token,
    );
    try {
      expect(dataOf(await page.next()).pets.nodes.map((p) => p.name)).toEqual(['Alpha', 'Bravo']);
      const quantityOf = (result: Stock, id: string) => result.inventory.nodes.find((n) => n.petId === id)?.quantity;
      expect(quantityOf(dataOf(await stock.next()), pets[1]!.id)).toBe(2);
      expect(dataOf(await orders.next()).pet.orders.totalCount).toBe(0);

      // A rename moves Charlie to the top of the page.
      await rename(pets[2]!.id, 'Aardvark');
      expect(dataOf(await page.next()).pets.nodes.map((p) => p.name)).toEqual(['Aardvark', 'Alpha']);
      // A stock change in the list.
      await setStock(pets[1]!.id, 7);
      let latest = dataOf(await stock.next());
      while (quantityOf(latest, pets[1]!.id) !== 7) latest = dataOf(await stock.next());
      // An order for the pet (its stock moves too: the page shows names only, the stock list follows).
      await write('mutation ($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id } }', { p: pets[2]!.id });
      expect(dataOf(await orders.next()).pet.orders).toEqual({ totalCount: 1, nodes: [{ quantity: 1 }] });
      latest = dataOf(await stock.next());
      while (quantityOf(latest, pets[2]!.id) !== 1) latest = dataOf(await stock.next());
    } finally {
      await Promise.all([page.close(), stock.close(), orders.close()]);
    }
  });

  it('checks scopes on every run: without orders:read the orders stay refused after a write', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 3);
    const token = await testToken([scopes.readOrders]);
    const refused = await live<never>('query Orders($p: ID!) @live { orders(filter: { petId: $p }) { totalCount } }', { p: pets[0]!.id });
    const allowed = await live<{ orders: { totalCount: number } }>(
      'query Orders($p: ID!) @live { orders(filter: { petId: $p }) { totalCount } }',
      { p: pets[0]!.id },
      token,
    );
    try {
      const firstRefusal = await refused.next();
      expect(firstRefusal.errors?.[0]?.extensions, JSON.stringify(firstRefusal)).toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
      expect(dataOf(await allowed.next()).orders.totalCount).toBe(0);
      await write('mutation ($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id } }', { p: pets[0]!.id });
      expect(dataOf(await allowed.next()).orders.totalCount).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      // Run again (a write touches everything it could not tell apart), and refused again: the same answer, not sent twice.
      expect(refused.pending()).toEqual([]);
    } finally {
      await Promise.all([refused.close(), allowed.close()]);
    }
  });

  it('ends with UNAUTHENTICATED when its token expires', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 3);
    const token = await testToken([scopes.readOrders], 'short-lived', { expiresIn: '3s' });
    const subscription = await live<never>(PET, { id: pets[0]!.id }, token);
    expect((await subscription.next()).data).toBeTruthy();
    const last = await subscription.next(10_000);
    expect(last.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(await subscription.ended).toEqual({ kind: 'complete' });
  });
});

describe('JSON patches, for clients that ask', () => {
  it('sends the whole answer first, then patches that rebuild each new answer', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 5);
    type Pet = { pet: { id: string; name: string; inventory: { quantity: number } } };
    const subscription = await subscribeSse<Pet>(`${gateway.baseUrl}/graphql`, PET, {
      variables: { id: pets[0]!.id },
      extensions: { livePatch: 'json-patch' },
    });
    try {
      const first = (await subscription.next()) as ExecutionResult<Pet> & { revision?: number };
      expect(first.revision).toBe(1);
      await setStock(pets[0]!.id, 2);
      const second = (await subscription.next()) as { patch?: unknown; revision?: number; data?: unknown };
      expect(second.data).toBeUndefined();
      expect(second.revision).toBe(2);
      const rebuilt = applyJSONPatch(first.data as Record<string, unknown>, second.patch as never);
      expect(rebuilt).toEqual({ pet: { id: pets[0]!.id, name: pets[0]!.name, inventory: { quantity: 2 } } });
    } finally {
      await subscription.close();
    }
  });
});

describe('the same live document sent twice', () => {
  it('is answered live both times (a query plan never answers @live), by one shared run per write', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 5);
    type Pet = { pet: { inventory: { quantity: number } } };
    const first = await subscribeSse<Pet>(`${gateway.baseUrl}/graphql`, PET, { variables: { id: pets[0]!.id } });
    const second = await subscribeSse<Pet>(`${gateway.baseUrl}/graphql`, PET, { variables: { id: pets[0]!.id } });
    // The same document for another pet is a run of its own, which this write does not touch.
    const other = await subscribeSse<Pet>(`${gateway.baseUrl}/graphql`, PET, { variables: { id: pets[0]!.id === '1' ? '2' : '1' } });
    try {
      await first.next();
      await second.next();
      await other.next();
      const [runs, pushes] = [
        await liveCounter(gateway.baseUrl, 'petstore_live_query_reexecutions_total'),
        await liveCounter(gateway.baseUrl, 'petstore_live_query_pushes_total'),
      ];
      await setStock(pets[0]!.id, 1);
      expect(dataOf(await first.next()).pet.inventory.quantity).toBe(1);
      expect(dataOf(await second.next()).pet.inventory.quantity).toBe(1);
      expect(await liveCounter(gateway.baseUrl, 'petstore_live_query_reexecutions_total')).toBe(runs + 1);
      expect(await liveCounter(gateway.baseUrl, 'petstore_live_query_pushes_total')).toBe(pushes + 2);
    } finally {
      await Promise.all([first.close(), second.close(), other.close()]);
    }
  });
});

describe('where a rename lands among the pets of its category by name', () => {
  it('is counted only while something reads it: a live first page is not run again for a rename past its rows', { timeout: 30_000 }, async () => {
    const crowded = await crowdedCategory(gateway.prisma);
    const [category, far] = [crowded.category, String(crowded.far.id)];
    const counted = () => gateway.statements.filter((sql) => sql.includes('update_pet(')).map((sql) => /with_name_rank => (\w+)/.exec(sql)?.[1]);
    await waitFor(async () => (await liveCounter(gateway.baseUrl, 'petstore_live_queries')) === 0, 'the earlier tests\' live queries to end');

    // No response cache, no Redis, no live query open: nothing reads it, so update_pet does not count it.
    gateway.statements.length = 0;
    await rename(far, 'Zzz far');
    expect(counted()).toEqual(['false']);

    const page = await subscribeSse<{ pets: { nodes: Array<{ name: string }> } }>(
      `${gateway.baseUrl}/graphql`,
      'query Crowded($c: ID!) @live { pets(first: 20, filter: { categoryId: $c }, orderBy: { field: NAME }) { nodes { id name } } }',
      { variables: { c: String(category.id) } },
    );
    try {
      const first = dataOf(await page.next()).pets.nodes.map((pet) => pet.name);
      expect(first.slice(0, 2)).toEqual(['Pet 000', 'Pet 001']);
      const runs = await liveCounter(gateway.baseUrl, 'petstore_live_query_reexecutions_total');
      gateway.statements.length = 0;
      await rename(far, 'Zzz farther');
      expect(counted()).toEqual(['true']);
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      expect(await liveCounter(gateway.baseUrl, 'petstore_live_query_reexecutions_total')).toBe(runs);
      expect(page.pending()).toEqual([]);
      // Landing among its rows: run again, and shown.
      await rename(far, 'Aaa near');
      expect(dataOf(await page.next()).pets.nodes.map((pet) => pet.name)).toEqual(['Aaa near', ...first.slice(0, 19)]);
    } finally {
      await page.close();
    }
  });
});

describe('as GraphiQL sends it', () => {
  it('a GET with Accept: text/event-stream gets the first answer, then the next after a write', { timeout: 30_000 }, async () => {
    const { pets } = await arrangePets(gateway.prisma, 5);
    const url = new URL(`${gateway.baseUrl}/graphql`);
    url.searchParams.set('query', PET);
    url.searchParams.set('variables', JSON.stringify({ id: pets[0]!.id }));
    const controller = new AbortController();
    const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    const untilAnswers = async (count: number) => {
      while ((received.match(/^event: next$/gm) ?? []).length < count) received += (await reader.read()).value ?? '';
    };
    try {
      await untilAnswers(1);
      expect(received).toContain('"quantity":5');
      await setStock(pets[0]!.id, 8);
      await untilAnswers(2);
      expect(received).toContain('"quantity":8');
    } finally {
      controller.abort();
    }
  });
});

describe('the schema', () => {
  it('declares @live on queries, for GraphiQL and code generators', async () => {
    const answer = await gateway.graphql<{ __schema: { directives: Array<{ name: string; locations: string[] }> } }>(
      '{ __schema { directives { name locations } } }',
    );
    expect(answer.data?.__schema.directives).toContainEqual(expect.objectContaining({ name: 'live', locations: ['QUERY'] }));
  });

  it('refuses @live with @defer in one operation', async () => {
    const answer = await gateway.graphql('query @live { ... @defer { categories { totalCount } } }');
    expect(answer.errors?.[0]?.message).toMatch(/live/i);
  });
});
