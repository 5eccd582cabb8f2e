import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
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
 * Every subscription, over both transports (GraphQL over SSE and graphql-ws
 * over WebSocket), against an in-process gateway with its own database:
 * each event arrives after the write that causes it, with the state the
 * write committed; scopes are checked when subscribing; a write that fails
 * or rolls back tells no one.
 */

const gateway = useTestGateway();

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

interface Transport {
  name: string;
  subscribe<T>(query: string, options?: { variables?: Record<string, unknown>; token?: string }): Promise<TestSubscription<T>>;
}

const subscriptions: TestSubscription<unknown>[] = [];
const connections: WebSocketConnection[] = [];

const transports: Transport[] = [
  {
    name: 'SSE',
    async subscribe<T>(query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) {
      const subscription = await subscribeSse<T>(`${gateway.baseUrl}/graphql`, query, options);
      expect(subscription.status).toBe(200);
      subscriptions.push(subscription as TestSubscription<unknown>);
      return subscription;
    },
  },
  {
    name: 'WebSocket',
    async subscribe<T>(query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) {
      const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`, { token: options.token });
      connections.push(connection);
      const subscription = connection.subscribe<T>(query, options.variables);
      subscriptions.push(subscription as TestSubscription<unknown>);
      return subscription;
    },
  },
];

afterEach(async () => {
  await Promise.all(subscriptions.splice(0).map((subscription) => subscription.close()));
  await Promise.all(connections.splice(0).map((connection) => connection.dispose()));
  // Each test starts with no subscription open, so it can wait for exactly its own.
  await waitFor(async () => (await openSubscriptions(gateway.baseUrl)) === 0, 'every subscription to end');
});

/** A category with pets in stock (or without an inventory entry when `quantity` is null). */
async function arrangePets(...quantities: Array<number | null>) {
  const category = await gateway.prisma.category.create({ data: { name: unique('events') } });
  const pets = [];
  for (const quantity of quantities) {
    const pet = await gateway.prisma.pet.create({ data: { name: unique('pet'), categoryId: category.id } });
    if (quantity !== null) {
      await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity, status: 'available' } });
    }
    pets.push({ id: pet.id.toString(), name: pet.name });
  }
  return pets;
}

async function mutate<T = Record<string, unknown>>(query: string, variables: Record<string, unknown>) {
  const response = await gateway.graphql<T>(query, variables);
  expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
  return response.data!;
}

const setStock = (petId: string, quantity: number) =>
  mutate(`mutation ($petId: ID!, $quantity: Int!) { updateInventory(petId: $petId, input: { quantity: $quantity }) { quantity } }`, {
    petId,
    quantity,
  });

const placeOrder = async (petId: string, quantity: number) =>
  (
    await mutate<{ placeOrder: { id: string } }>(
      `mutation ($petId: ID!, $quantity: Int!) { placeOrder(input: { petId: $petId, quantity: $quantity }) { id } }`,
      { petId, quantity },
    )
  ).placeOrder.id;

const inventorySubscription = /* GraphQL */ `
  subscription Inventory($petId: ID) {
    inventoryChanged(petId: $petId) { petId quantity status pet { id name status } }
  }
`;

const orderSubscription = /* GraphQL */ `
  subscription Orders { orderChanged { change orderId petId quantity shipDate complete } }
`;

const petStatusSubscription = /* GraphQL */ `
  subscription PetStatus { petStatusChanged { petId name categoryId status previousStatus } }
`;

interface InventoryEvent {
  inventoryChanged: { petId: string; quantity: number; status: string; pet: { id: string; name: string; status: string } | null };
}
interface OrderEvent {
  orderChanged: { change: string; orderId: string; petId: string; quantity: number; shipDate: string | null; complete: boolean };
}
interface PetStatusEvent {
  petStatusChanged: { petId: string; name: string; categoryId: string; status: string; previousStatus: string };
}

const dataOf = <T>(result: ExecutionResult<T>): T => {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
};

describe.each(transports)('subscriptions over $name', (transport) => {
  it.each([
    ['"" as a variable', inventorySubscription, { petId: '' }],
    ['"" written in the document', 'subscription { inventoryChanged(petId: "") { petId } }', undefined],
    ['"  " written in the document', 'subscription { inventoryChanged(petId: "  ") { petId } }', undefined],
    ['"0"', inventorySubscription, { petId: '0' }],
    ['"pet-1"', inventorySubscription, { petId: 'pet-1' }],
  ])('refuses inventoryChanged(petId: %s) with VALIDATION_FAILED rather than subscribe to every pet', async (_case, query, variables) => {
    const subscription = await transport.subscribe<InventoryEvent>(query, { variables });
    const refused = await subscription.next();
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.[0]).toMatchObject({ path: ['inventoryChanged'], extensions: { code: 'VALIDATION_FAILED', status: 400, field: 'petId' } });
    expect(await openSubscriptions(gateway.baseUrl)).toBe(0);
  });

  it('inventoryChanged(petId) delivers that pet’s stock after each write, with the committed state, and no other pet’s', async () => {
    const [watched, other] = await arrangePets(3, 3);
    // Reads of stock are public: anonymous may subscribe.
    const subscription = await transport.subscribe<InventoryEvent>(inventorySubscription, {
      variables: { petId: watched!.id },
    });
    await untilSubscribed(gateway.baseUrl, 1);

    await setStock(other!.id, 9);
    await setStock(watched!.id, 7);
    const first = dataOf(await subscription.next());
    expect(first.inventoryChanged).toEqual({
      petId: watched!.id,
      quantity: 7,
      status: 'AVAILABLE',
      pet: { id: watched!.id, name: watched!.name, status: 'AVAILABLE' },
    });
    // Published after commit: what the event says is what any reader now finds.
    const stored = await gateway.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(watched!.id) } });
    expect(stored.quantity).toBe(7);

    await setStock(watched!.id, 0);
    const second = dataOf(await subscription.next());
    expect(second.inventoryChanged).toMatchObject({ petId: watched!.id, quantity: 0, status: 'SOLD' });

    // An order changes the stock too.
    await setStock(watched!.id, 4);
    dataOf(await subscription.next());
    await placeOrder(watched!.id, 4);
    const ordered = dataOf(await subscription.next());
    expect(ordered.inventoryChanged).toMatchObject({ petId: watched!.id, quantity: 0, status: 'PENDING' });
    expect(subscription.pending()).toEqual([]);
  });

  it('inventoryChanged without petId delivers every pet’s stock changes, in order', async () => {
    const [first, second] = await arrangePets(1, 1);
    const subscription = await transport.subscribe<InventoryEvent>(inventorySubscription);
    await untilSubscribed(gateway.baseUrl, 1);

    await setStock(first!.id, 11);
    await setStock(second!.id, 12);
    const events = [dataOf(await subscription.next()), dataOf(await subscription.next())];
    expect(events.map((event) => [event.inventoryChanged.petId, event.inventoryChanged.quantity])).toEqual([
      [first!.id, 11],
      [second!.id, 12],
    ]);
  });

  it('orderChanged delivers orders placed, completed and cancelled (with orders:read)', async () => {
    const [pet] = await arrangePets(10);
    const subscription = await transport.subscribe<OrderEvent>(orderSubscription, {
      token: await testToken([scopes.readOrders], 'order-watcher'),
    });
    await untilSubscribed(gateway.baseUrl, 1);

    const placed = await placeOrder(pet!.id, 2);
    expect(dataOf(await subscription.next()).orderChanged).toEqual({
      change: 'PLACED',
      orderId: placed,
      petId: pet!.id,
      quantity: 2,
      shipDate: null,
      complete: false,
    });

    await mutate('mutation ($id: ID!) { completeOrder(id: $id) { id } }', { id: placed });
    const completed = dataOf(await subscription.next()).orderChanged;
    expect(completed).toMatchObject({ change: 'COMPLETED', orderId: placed, petId: pet!.id, quantity: 2, complete: true });
    expect(Date.parse(completed.shipDate!)).not.toBeNaN();

    const toCancel = await placeOrder(pet!.id, 3);
    expect(dataOf(await subscription.next()).orderChanged).toMatchObject({ change: 'PLACED', orderId: toCancel });
    await mutate('mutation ($id: ID!) { cancelOrder(id: $id) { id } }', { id: toCancel });
    expect(dataOf(await subscription.next()).orderChanged).toEqual({
      change: 'CANCELLED',
      orderId: toCancel,
      petId: pet!.id,
      quantity: 3,
      shipDate: null,
      complete: false,
    });
    expect(subscription.pending()).toEqual([]);
  });

  it('petStatusChanged delivers a status set by hand and one that follows the stock', async () => {
    const [stocked, unstocked] = await arrangePets(2, null);
    const subscription = await transport.subscribe<PetStatusEvent>(petStatusSubscription);
    await untilSubscribed(gateway.baseUrl, 1);

    // A pet without an inventory entry keeps the status it is given.
    await mutate('mutation ($id: ID!) { updatePet(id: $id, input: { status: PENDING }) { status } }', {
      id: unstocked!.id,
    });
    expect(dataOf(await subscription.next()).petStatusChanged).toMatchObject({
      petId: unstocked!.id,
      name: unstocked!.name,
      status: 'PENDING',
      previousStatus: 'AVAILABLE',
    });

    // A stock write that does not change the status says nothing here...
    await setStock(stocked!.id, 5);
    // ...one that runs the stock out does.
    await setStock(stocked!.id, 0);
    expect(dataOf(await subscription.next()).petStatusChanged).toMatchObject({
      petId: stocked!.id,
      status: 'SOLD',
      previousStatus: 'AVAILABLE',
    });
    await setStock(stocked!.id, 1);
    expect(dataOf(await subscription.next()).petStatusChanged).toMatchObject({
      petId: stocked!.id,
      status: 'AVAILABLE',
      previousStatus: 'SOLD',
    });
    expect(subscription.pending()).toEqual([]);
  });

  it('orderChanged is refused when subscribing: anonymous UNAUTHENTICATED, without orders:read FORBIDDEN', async () => {
    for (const [token, code, status] of [
      [undefined, 'UNAUTHENTICATED', 401],
      [await testToken([scopes.writeOrders], 'no-read'), 'FORBIDDEN', 403],
    ] as const) {
      const subscription = await transport.subscribe<OrderEvent>(orderSubscription, token ? { token } : {});
      const ending = subscription.ended.then((how) => how);
      // The refusal comes as the operation's only result (SSE `next`, WS `next` or `error`), then it ends.
      const errors = await Promise.race([
        subscription.next(5_000).then((result) => result.errors),
        ending.then((how) => (how.kind === 'error' ? (how.errors as ExecutionResult['errors']) : undefined)),
      ]);
      expect(errors, JSON.stringify(errors)).toHaveLength(1);
      expect(errors![0]!.extensions).toMatchObject({ code, status });
      expect(['complete', 'error']).toContain((await ending).kind);
    }
    expect(await openSubscriptions(gateway.baseUrl)).toBe(0);
  });

  it('a write that fails, or rolls back after recording its events, publishes nothing', async () => {
    const [pet, doomed] = await arrangePets(1, 5);
    await gateway.prisma.pet.update({ where: { id: BigInt(doomed!.id) }, data: { name: unique('doomed') } });
    // The last statement of an order's transaction (the pet's new status) fails for this pet:
    // by then its events (order placed, stock changed) are recorded, and must be dropped.
    await gateway.prisma.$executeRawUnsafe(`
      CREATE OR REPLACE FUNCTION refuse_doomed() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`);
    await gateway.prisma.$executeRawUnsafe(`
      CREATE OR REPLACE TRIGGER refuse_doomed BEFORE UPDATE ON pets
      FOR EACH ROW WHEN (OLD.name LIKE 'doomed-%') EXECUTE FUNCTION refuse_doomed()`);

    const token = await testToken([scopes.readOrders], 'rollback-watcher');
    const inventory = await transport.subscribe<InventoryEvent>(inventorySubscription);
    const orders = await transport.subscribe<OrderEvent>(orderSubscription, { token });
    const statuses = await transport.subscribe<PetStatusEvent>(petStatusSubscription);
    await untilSubscribed(gateway.baseUrl, 3);

    // Refused by a rule: more than is in stock.
    const refused = await gateway.graphql(
      'mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 2 }) { id } }',
      { petId: pet!.id },
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_STOCK');
    // Rolled back by the database after the events were recorded (stock 5 → 0 would make it SOLD).
    const rolledBack = await gateway.graphql(
      'mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 5 }) { id } }',
      { petId: doomed!.id },
    );
    expect(rolledBack.errors?.[0]?.extensions?.code).toBe('INTERNAL');
    expect(await gateway.prisma.order.count({ where: { petId: BigInt(doomed!.id) } })).toBe(0);

    // A write that succeeds afterwards is the first thing each subscriber hears.
    const placed = await placeOrder(pet!.id, 1);
    expect(dataOf(await orders.next()).orderChanged).toMatchObject({ change: 'PLACED', orderId: placed, petId: pet!.id });
    expect(dataOf(await inventory.next()).inventoryChanged).toMatchObject({ petId: pet!.id, quantity: 0 });
    expect(dataOf(await statuses.next()).petStatusChanged).toMatchObject({ petId: pet!.id, status: 'PENDING' });
    expect([...orders.pending(), ...inventory.pending(), ...statuses.pending()]).toEqual([]);
  });
});

describe('subscriptions and the gateway', () => {
  it.each(transports.map((transport) => [transport.name, transport] as const))(
    'over %s, a subscription ends with UNAUTHENTICATED when the token it was opened with expires',
    async (_name, transport) => {
      const token = await testToken([], 'short-lived', { expiresIn: '2s' });
      const subscription = await transport.subscribe(petStatusSubscription, { token });
      const expired = await subscription.next(5_000);
      expect(expired.data ?? null).toBeNull();
      expect(expired.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
      expect(await subscription.ended).toEqual({ kind: 'complete' });
    },
  );

  it('over WebSocket, an operation sent after the token expired is refused; the connection stays', async () => {
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`, { token: await testToken([], 'brief', { expiresIn: '1s' }) });
    connections.push(connection);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const late = connection.subscribe('query { __typename }');
    const ending = await late.ended;
    expect(ending.kind).toBe('error');
    expect(JSON.stringify(ending)).toContain('UNAUTHENTICATED');
    const closedSoon = await Promise.race([
      connection.closed.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200)),
    ]);
    expect(closedSoon).toBe(false);
  });

  it('over WebSocket, a bad token closes the connection; a syntax error fails only its operation', async () => {
    await expect(connectWebSocket(`${gateway.baseUrl}/graphql`, { token: 'not-a-token' })).rejects.toThrow(/4403/);

    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`);
    connections.push(connection);
    const broken = connection.subscribe('subscription { petStatusChanged { ');
    const ending = await broken.ended;
    expect(ending.kind).toBe('error');
    expect(JSON.stringify(ending)).toContain('VALIDATION_FAILED');
    // The connection survives and serves the next operation.
    const working = connection.subscribe<{ __typename: string }>('query { __typename }');
    expect(await working.next()).toEqual({ data: { __typename: 'Query' } });
  });
});
