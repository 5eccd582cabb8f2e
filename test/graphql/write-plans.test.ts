import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { allScopes, scopes } from '../../src/auth/scopes.js';
import { schema } from '../../src/schema/index.js';
import { type TestGateway, useTestGateway } from '../support/gateway.js';
import { bearer, postGraphQL } from '../support/http.js';
import { testToken } from '../support/tokens.js';

/**
 * A planned write answers exactly as field-by-field execution does. A write cannot be run twice
 * to compare, so two gateways on two databases with the same rows take the same generated
 * placeOrder documents in the same order: one with query plans (a document's requests after its first are
 * planned), one without. Every answer (status and body: data, errors with their codes, paths and
 * locations, the cost), the stock each leaves and the orders written must be the same. Both keep a
 * response cache, and after each write both answer a cached read of the stock: a planned write that
 * did not tell the cache what it changed would leave the stale answer there.
 */

const cache = { ttlMs: 60_000, maxEntries: 100, maxBytes: 10_000_000, keyPrefix: 'unused without Redis' };
const planned = useTestGateway({ responseCache: cache });
const fieldByField = useTestGateway({ responseCache: cache, queryPlans: false });

/** Pets with plenty of stock, a little, none at all, and one without an entry. */
const pets = { plenty: '', little: '', none: '', noEntry: '' };

beforeAll(async () => {
  // The same rows in the same order: the two databases give them the same ids.
  for (const gateway of [planned, fieldByField]) {
    const category = await gateway.prisma.category.create({ data: { name: 'Write plans' } });
    const made: string[] = [];
    for (const [name, quantity] of [['Plenty', 500], ['Little', 4], ['None', 0], ['No entry', undefined]] as const) {
      const pet = await gateway.prisma.pet.create({ data: { name, categoryId: category.id, status: quantity ? 'available' : 'sold' } });
      if (quantity !== undefined) await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity, status: quantity ? 'available' : 'sold' } });
      made.push(pet.id.toString());
    }
    [pets.plenty, pets.little, pets.none, pets.noEntry] = made as [string, string, string, string];
  }
});

interface Generated {
  text: string;
  variables: Record<string, unknown>;
  petId: string;
  scopes: readonly string[];
  /** It selects the order's pet: read after the write, in its transaction, so not planned. */
  relation: boolean;
}

const leaves = ['id', 'petId', 'quantity', 'shipDate', 'complete', '__typename'] as const;

const selectionArb = fc
  .array(
    fc.record({
      field: fc.constantFrom(...leaves),
      alias: fc.option(fc.constantFrom('a', 'b', 'theId'), { nil: undefined }),
      wrap: fc.constantFrom('plain', 'plain', 'inline', 'fragment', 'include', 'skip'),
    }),
    { minLength: 1, maxLength: 5 },
  )
  // graphql-js refuses one response key for two different fields (validation); such documents are not the subject here.
  .filter((items) => {
    const keys = new Map<string, string>();
    return items.every(({ field, alias }) => {
      const key = alias ?? field;
      if (keys.has(key) && keys.get(key) !== field) return false;
      keys.set(key, field);
      return true;
    });
  });

const generated: fc.Arbitrary<Generated> = fc
  .record({
    selection: selectionArb,
    named: fc.boolean(),
    wholeInput: fc.boolean(),
    pet: fc.constantFrom('plenty', 'plenty', 'plenty', 'little', 'none', 'noEntry', 'missing'),
    quantity: fc.constantFrom(1, 1, 1, 2, 3, 0, 1001),
    shipDate: fc.constantFrom(undefined, undefined, '2027-01-15T10:00:00.000Z', 'not a date'),
    condition: fc.boolean(),
    relation: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
    refused: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
  })
  .map((choice) => {
    const variables: Record<string, unknown> = { c: choice.condition };
    const definitions = ['$c: Boolean!'];
    const fragments: string[] = [];
    const petId = choice.pet === 'missing' ? '987654321' : pets[choice.pet as keyof typeof pets];
    const input: Record<string, unknown> = { petId, quantity: choice.quantity, ...(choice.shipDate ? { shipDate: choice.shipDate } : {}) };
    let argument: string;
    if (choice.wholeInput) {
      definitions.push('$input: PlaceOrderInput!');
      variables.input = input;
      argument = '$input';
    } else {
      definitions.push('$p: ID!', '$q: Int!');
      variables.p = petId;
      variables.q = choice.quantity;
      argument = `{ petId: $p, quantity: $q${choice.shipDate ? `, shipDate: ${JSON.stringify(choice.shipDate)}` : ''} }`;
    }
    const fields = choice.selection.map(({ field, alias, wrap }, index) => {
      const written = alias ? `${alias}: ${field}` : field;
      switch (wrap) {
        case 'inline':
          return `... on Order { ${written} }`;
        case 'fragment':
          fragments.push(`fragment F${index} on Order { ${written} }`);
          return `...F${index}`;
        case 'include':
          return `${written} @include(if: $c)`;
        case 'skip':
          return `${written} @skip(if: $c)`;
        default:
          return written;
      }
    });
    if (choice.relation) fields.push('pet { name status }');
    const text = [
      `mutation${choice.named ? ' Order' : ''}(${definitions.join(', ')}) { placeOrder(input: ${argument}) { ${fields.join(' ')} } }`,
      ...fragments,
    ].join('\n');
    return { text, variables, petId, relation: choice.relation, scopes: choice.refused ? allScopes.filter((scope) => scope !== scopes.writeOrders) : allScopes };
  });

/** What a client sees of an answer, less what differs by request: its request id, and the budget left. */
async function send(gateway: TestGateway, request: { text: string; variables: Record<string, unknown>; scopes: readonly string[] }) {
  const answer = await postGraphQL(gateway.baseUrl, { query: request.text, variables: request.variables }, bearer(await testToken(request.scopes)));
  const body = JSON.parse(JSON.stringify(answer.body)) as { errors?: Array<{ extensions?: Record<string, unknown> }>; extensions?: Record<string, unknown> };
  for (const error of body.errors ?? []) delete error.extensions?.requestId;
  delete (body.extensions?.cost as { budgetLeft?: number } | undefined)?.budgetLeft;
  delete body.extensions?.requestId;
  return { status: answer.status, body };
}

const STOCK = /* GraphQL */ `
  query Stock($id: ID!) { pet(id: $id) { status inventory { quantity status } orders(first: 100) { totalCount } } }
`;

/** Executions of each kind so far, from /metrics. */
async function executions(gateway: TestGateway): Promise<Record<string, number>> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^petstore_graphql_executions_total\{engine="(\w+)"\} (\d+)/gm)) counts[match[1]!] = Number(match[2]);
  return counts;
}

/** What the generated writes met: later requests a plan could answer, those it did, and the refusals' codes. */
interface Tally {
  plannable: number;
  plannedAnswers: number;
  refusals: Set<string>;
}
const newTally = (): Tally => ({ plannable: 0, plannedAnswers: 0, refusals: new Set() });

type Sent = Parameters<typeof send>[1];

/**
 * One write sent three times to each gateway (yoga runs a document's first request, its plan the
 * next ones), the two answers compared each time, then `readAfter` on both; returns the planned
 * gateway's reads. A later request without `relation` and without errors is one a plan must answer.
 * A write that can succeed only once (closing an order) gives each time's request by `requestOf`.
 */
async function writeThriceOnBoth(requestOf: Sent | ((time: number) => Promise<Sent>), tally: Tally, relation: boolean, readAfter?: Sent) {
  const reads: Array<Awaited<ReturnType<typeof send>>> = [];
  for (let time = 0; time < 3; time++) {
    const request = typeof requestOf === 'function' ? await requestOf(time) : requestOf;
    const before = await executions(planned);
    const plannedAnswer = await send(planned, request);
    const wasPlanned = ((await executions(planned)).plan ?? 0) > (before.plan ?? 0);
    const fieldByFieldAnswer = await send(fieldByField, request);
    expect(plannedAnswer, request.text).toEqual(fieldByFieldAnswer);
    for (const error of plannedAnswer.body.errors ?? []) tally.refusals.add(String(error.extensions?.code));
    if (time > 0 && !relation && !plannedAnswer.body.errors) {
      tally.plannable++;
      if (wasPlanned) tally.plannedAnswers++;
    }
    if (readAfter) {
      const read = await send(planned, readAfter);
      expect(read).toEqual(await send(fieldByField, readAfter));
      reads.push(read);
    }
  }
  return reads;
}

/** Every later request a plan could answer was its own, and every kind of refusal in `refusals` was met. */
function expectPlannedWhereverPossible(tally: Tally, refusals: string[]) {
  expect(tally.plannable).toBeGreaterThan(10);
  expect(tally.plannedAnswers).toBe(tally.plannable);
  expect([...tally.refusals].sort()).toEqual(refusals);
}

/** The stock entries and statuses of the pets `ids`, alike on both databases. */
async function expectSameStock(ids: bigint[]) {
  const of = async (gateway: TestGateway) => ({
    stock: await gateway.prisma.inventoryItem.findMany({ where: { petId: { in: ids } }, orderBy: { petId: 'asc' }, select: { petId: true, quantity: true, status: true } }),
    statuses: await gateway.prisma.pet.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' }, select: { id: true, status: true } }),
  });
  expect(await of(planned)).toEqual(await of(fieldByField));
}

describe('planned writes', () => {
  it('answer generated placeOrder documents as field-by-field execution does, leave the same rows, and outdate cached reads', async () => {
    /** Later requests that wrote with no relation selected, and those of them a plan answered. */
    let plannable = 0;
    let plannedAnswers = 0;
    /** Later requests whose write failed in the database (refused), answered from that outcome. */
    let settled = 0;
    await fc.assert(
      fc.asyncProperty(generated, async (request) => {
        // Three times each: yoga runs a document's first request, its plan the next ones (none kept by the cache).
        for (let time = 0; time < 3; time++) {
          const before = await executions(planned);
          planned.statements.length = 0;
          const plannedAnswer = await send(planned, request);
          const plannedWrites = planned.statements.filter((sql) => sql.includes('place_order(')).length;
          const wasPlanned = ((await executions(planned)).plan ?? 0) > (before.plan ?? 0);
          fieldByField.statements.length = 0;
          const fieldByFieldAnswer = await send(fieldByField, request);
          expect(plannedAnswer, request.text).toEqual(fieldByFieldAnswer);
          // A write the plan began and that failed is answered from its outcome, never run again.
          expect(plannedWrites, request.text).toBe(fieldByField.statements.filter((sql) => sql.includes('place_order(')).length);
          if (time > 0 && !request.relation && plannedAnswer.status === 200 && !plannedAnswer.body.errors) {
            plannable++;
            if (wasPlanned) plannedAnswers++;
          }
          if (time > 0 && plannedWrites === 1 && plannedAnswer.body.errors && !request.relation) settled++;
          if (request.petId !== '987654321') {
            const stock = { text: STOCK, variables: { id: request.petId }, scopes: allScopes };
            expect(await send(planned, stock)).toEqual(await send(fieldByField, stock));
          }
        }
      }),
      { numRuns: 100, seed: 20261126 },
    );
    const orders = (gateway: TestGateway) =>
      gateway.prisma.order.findMany({ orderBy: { id: 'asc' }, select: { id: true, petId: true, quantity: true, shipDate: true, complete: true } });
    const stock = (gateway: TestGateway) => gateway.prisma.inventoryItem.findMany({ orderBy: { petId: 'asc' }, select: { petId: true, quantity: true, status: true } });
    expect(await orders(planned)).toEqual(await orders(fieldByField));
    expect(await stock(planned)).toEqual(await stock(fieldByField));
    expect((await orders(planned)).length).toBeGreaterThan(20);
    // Every later request that wrote and selected no relation was a plan's; refusals in the database were settled.
    expect(plannable).toBeGreaterThan(10);
    expect(plannedAnswers).toBe(plannable);
    expect(settled).toBeGreaterThan(3);
    expect((await executions(fieldByField)).plan ?? 0).toBe(0);
  });

  it('writes every one of identical planned writes sent at once: none is given another one\'s answer by the response cache', async () => {
    const place = { text: 'mutation Same($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id quantity } }', variables: { p: pets.plenty }, scopes: allScopes };
    // Yoga runs it first; the ten after it, at once, are its plan's.
    await send(planned, place);
    const before = await planned.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(pets.plenty) } });
    const answers = await Promise.all(Array.from({ length: 10 }, () => send(planned, place)));
    const ids = answers.map((answer) => (answer.body as { data?: { placeOrder?: { id: string } } }).data?.placeOrder?.id);
    expect(new Set(ids).size).toBe(10);
    expect((await planned.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(pets.plenty) } })).quantity).toBe(before.quantity - 10);
  });

  it('answer generated updatePet documents as field-by-field execution does, refusals included, and leave the same pets', async () => {
    // A second category on each database (the same id on both), to move pets into.
    let movedTo = '';
    for (const gateway of [planned, fieldByField]) movedTo = String((await gateway.prisma.category.create({ data: { name: 'Moved here' } })).id);
    const change = fc.record({
      pet: fc.constantFrom('plenty', 'none', 'noEntry', 'noEntry', 'missing'),
      name: fc.constantFrom(undefined, undefined, 'Renamed', 'Renamed again', '', 'x'.repeat(101)),
      category: fc.constantFrom(undefined, undefined, 'moved', 'missing'),
      status: fc.constantFrom(undefined, undefined, 'AVAILABLE', 'PENDING', 'SOLD'),
      selection: fc.subarray(['id', 'name', 'status', 'categoryId', 'nodeId', '__typename', 'theName: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const id = choice.pet === 'missing' ? '987654321' : pets[choice.pet as keyof typeof pets];
        const input = {
          ...(choice.name === undefined ? {} : { name: choice.name }),
          ...(choice.category === undefined ? {} : { categoryId: choice.category === 'moved' ? movedTo : '987654321' }),
          ...(choice.status === undefined ? {} : { status: choice.status }),
        };
        const fields = [...choice.selection, ...(choice.relation ? ['category { name }'] : [])].join(' ');
        const request = {
          text: `mutation Change($id: ID!, $input: PetChanges!) { updatePet(id: $id, input: $input) { ${fields} } }`,
          variables: { id, input },
          scopes: choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes,
        };
        const read = { text: 'query Pet($id: ID!) { pet(id: $id) { name status categoryId } }', variables: { id }, scopes: allScopes };
        await writeThriceOnBoth(request, tally, choice.relation, id === '987654321' ? undefined : read);
      }),
      { numRuns: 60, seed: 20261127 },
    );
    const petsOf = (gateway: TestGateway) =>
      gateway.prisma.pet.findMany({ orderBy: { id: 'asc' }, select: { id: true, name: true, categoryId: true, status: true } });
    expect(await petsOf(planned)).toEqual(await petsOf(fieldByField));
    // Answered by the plan whenever the answer reads only the pet's own fields; every kind of refusal met.
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
  });

  it('answer generated updateInventory documents as field-by-field execution does, refusals included, and leave the same stock', async () => {
    // Pets whose rows are alike on both databases (the test above placed orders on one only): an open order
    // for the one out of stock, so that at zero its entry is PENDING; the one with no entry gains one.
    const alike = ['little', 'none', 'noEntry'] as const;
    for (const gateway of [planned, fieldByField]) await gateway.prisma.order.create({ data: { petId: BigInt(pets.none), quantity: 1 } });
    const change = fc.record({
      pet: fc.constantFrom(...alike, 'missing'),
      quantity: fc.constantFrom(0, 0, 1, 7, 250, -1),
      selection: fc.subarray(['petId', 'quantity', 'status', 'nodeId', '__typename', 'count: quantity'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    const statuses = new Set<string>();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const petId = choice.pet === 'missing' ? '987654321' : pets[choice.pet as keyof typeof pets];
        const fields = [...choice.selection, ...(choice.relation ? ['pet { name status }'] : [])].join(' ');
        const request = {
          text: `mutation Stock($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { ${fields} } }`,
          variables: { p: petId, q: choice.quantity },
          scopes: choice.refused ? allScopes.filter((scope) => scope !== scopes.writeInventory) : allScopes,
        };
        const stock = { text: STOCK, variables: { id: petId }, scopes: allScopes };
        const reads = await writeThriceOnBoth(request, tally, choice.relation, petId === '987654321' ? undefined : stock);
        for (const read of reads) statuses.add(String((read.body as { data?: { pet?: { status?: string } } }).data?.pet?.status));
      }),
      { numRuns: 40, seed: 20261127 },
    );
    await expectSameStock(alike.map((name) => BigInt(pets[name])));
    expectPlannedWhereverPossible(tally, ['FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
    // Every status the rule gives: with stock, at zero with an open order, at zero without.
    expect([...statuses].sort()).toEqual(['AVAILABLE', 'PENDING', 'SOLD']);
  });

  it('answer generated completeOrder and cancelOrder documents as field-by-field execution does, refusals included, and leave the same orders and stock', async () => {
    // Pets alike on both databases: stock left; none left, with an order open besides the one closed; none left
    // and no other order; no inventory entry. Each gets an order of its own ids on both databases.
    const kinds = ['stocked', 'zeroOthersOpen', 'zeroAlone', 'noEntry'] as const;
    const closingPets = {} as Record<(typeof kinds)[number], string>;
    const category = (await planned.prisma.category.findFirstOrThrow({ where: { name: 'Write plans' } })).id;
    for (const gateway of [planned, fieldByField]) {
      for (const [kind, quantity] of [['stocked', 5], ['zeroOthersOpen', 0], ['zeroAlone', 0], ['noEntry', undefined]] as const) {
        const pet = await gateway.prisma.pet.create({ data: { name: `Closing ${kind}`, categoryId: category, status: quantity ? 'available' : 'pending' } });
        if (quantity !== undefined) await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity, status: quantity ? 'available' : 'pending' } });
        if (kind === 'zeroOthersOpen') await gateway.prisma.order.create({ data: { id: 799_999n, petId: pet.id, quantity: 1 } });
        if (closingPets[kind] !== undefined) expect(String(pet.id)).toBe(closingPets[kind]);
        closingPets[kind] = String(pet.id);
      }
    }
    const shipDate = new Date('2027-03-01T09:30:00.000Z');
    let nextOrderId = 800_000n;
    /** The same open order on both databases, with the same id. */
    const openOrder = async (petId: string, shipped: boolean) => {
      const id = nextOrderId++;
      for (const gateway of [planned, fieldByField]) {
        await gateway.prisma.order.create({ data: { id, petId: BigInt(petId), quantity: 2, shipDate: shipped ? shipDate : null } });
      }
      return String(id);
    };
    const change = fc.record({
      mutation: fc.constantFrom('completeOrder', 'cancelOrder'),
      pet: fc.constantFrom(...kinds),
      order: fc.constantFrom('open', 'open', 'open', 'missing'),
      shipped: fc.boolean(),
      selection: fc.subarray(['id', 'petId', 'quantity', 'complete', 'shipDate', 'nodeId', '__typename', 'howMany: quantity'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    const statuses = new Set<string>();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const petId = closingPets[choice.pet];
        // Each run starts its pet as its kind says: cancelled orders returned stock, refused ones stayed open.
        for (const gateway of [planned, fieldByField]) {
          await gateway.prisma.inventoryItem.updateMany({ where: { petId: BigInt(petId) }, data: { quantity: choice.pet === 'stocked' ? 5 : 0 } });
          await gateway.prisma.order.updateMany({ where: { petId: BigInt(petId), complete: false, id: { gte: 800_000n } }, data: { complete: true, shipDate } });
        }
        // A ship date set to now differs between the two databases; it is compared only where it was given.
        const selection = choice.selection.filter((field) => field !== 'shipDate' || choice.shipped || choice.mutation === 'cancelOrder');
        const fields = [...(selection.length > 0 ? selection : ['id']), ...(choice.relation ? ['pet { status inventory { quantity status } }'] : [])].join(' ');
        const text = `mutation Close($id: ID!) { ${choice.mutation}(id: $id) { ${fields} } }`;
        const scopeList = choice.refused ? allScopes.filter((scope) => scope !== scopes.writeOrders) : allScopes;
        // A new order the first two times; the third closes the second's again (CONFLICT or NOT_FOUND).
        let id = '987654321';
        const requestOf = async (time: number) => {
          if (choice.order === 'open' && time < 2) id = await openOrder(petId, choice.shipped);
          return { text, variables: { id }, scopes: scopeList };
        };
        const stock = { text: STOCK, variables: { id: petId }, scopes: allScopes };
        const reads = await writeThriceOnBoth(requestOf, tally, choice.relation, stock);
        for (const read of reads) statuses.add(String((read.body as { data?: { pet?: { status?: string } } }).data?.pet?.status));
      }),
      { numRuns: 60, seed: 20261127 },
    );
    const ids = Object.values(closingPets).map(BigInt);
    const ordersOf = async (gateway: TestGateway) =>
      (await gateway.prisma.order.findMany({ where: { petId: { in: ids } }, orderBy: { id: 'asc' }, select: { id: true, petId: true, quantity: true, shipDate: true, complete: true } }))
        // Completed here without one, an order's ship date is when it was completed: on each database its own now.
        .map((order) => ({ ...order, shipDate: order.shipDate?.getTime() === shipDate.getTime() ? order.shipDate : order.shipDate !== null }));
    expect(await ordersOf(planned)).toEqual(await ordersOf(fieldByField));
    await expectSameStock(ids);
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'NOT_FOUND']);
    // Every status the rule gives: with stock, at zero with an open order, at zero without.
    expect([...statuses].sort()).toEqual(['AVAILABLE', 'PENDING', 'SOLD']);
  });

  it('answer generated createPet documents as field-by-field execution does, refusals included, and add the same pets', async () => {
    const category = String((await planned.prisma.category.findFirstOrThrow({ where: { name: 'Write plans' } })).id);
    const change = fc.record({
      name: fc.constantFrom('Newcomer', '  Trimmed  ', '', 'x'.repeat(101)),
      category: fc.constantFrom('exists', 'exists', 'exists', 'missing'),
      status: fc.constantFrom(undefined, undefined, 'AVAILABLE', 'PENDING', 'SOLD'),
      selection: fc.subarray(['id', 'name', 'status', 'categoryId', 'nodeId', '__typename', 'called: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const input = { name: choice.name, categoryId: choice.category === 'exists' ? category : '987654321', ...(choice.status ? { status: choice.status } : {}) };
        const fields = [...choice.selection, ...(choice.relation ? ['category { name }'] : [])].join(' ');
        const request = {
          text: `mutation Add($input: NewPet!) { createPet(input: $input) { ${fields} } }`,
          variables: { input },
          scopes: choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes,
        };
        // The pets of the category, read after each write: a planned write must outdate the cached page too.
        const read = { text: 'query Added($c: ID!) { pets(first: 100, filter: { categoryId: $c }) { totalCount nodes { id name status } } }', variables: { c: category }, scopes: allScopes };
        await writeThriceOnBoth(request, tally, choice.relation, read);
      }),
      { numRuns: 40, seed: 20261127 },
    );
    const petsOf = (gateway: TestGateway) =>
      gateway.prisma.pet.findMany({ where: { categoryId: BigInt(category) }, orderBy: { id: 'asc' }, select: { id: true, name: true, categoryId: true, status: true } });
    expect(await petsOf(planned)).toEqual(await petsOf(fieldByField));
    expectPlannedWhereverPossible(tally, ['FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
  });

  it('answer generated createCategory documents as field-by-field execution does, refusals included, and add the same categories', async () => {
    let added = 0;
    const change = fc.record({
      name: fc.constantFrom('new', 'new', 'new', '  new  ', 'Write plans', '', 'x'.repeat(101)),
      description: fc.constantFrom(undefined, undefined, null, 'Furry', 'y'.repeat(1001)),
      selection: fc.subarray(['id', 'name', 'description', 'nodeId', '__typename', 'called: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const fields = [...choice.selection, ...(choice.relation ? ['pets { totalCount }'] : [])].join(' ');
        const text = `mutation AddCategory($input: NewCategory!) { createCategory(input: $input) { ${fields} } }`;
        const scopeList = choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes;
        // A new name each time (the same on both), unless it is one that is taken or refused.
        const requestOf = async () => {
          const name = choice.name.trim() === 'new' ? choice.name.replace('new', `New kind ${++added}`) : choice.name;
          const input = { name, ...(choice.description === undefined ? {} : { description: choice.description }) };
          return { text, variables: { input }, scopes: scopeList };
        };
        const read = { text: 'query Kinds { categories(first: 100) { totalCount nodes { id name description } } }', variables: {}, scopes: allScopes };
        await writeThriceOnBoth(requestOf, tally, choice.relation, read);
      }),
      { numRuns: 25, seed: 20261128 },
    );
    const categoriesOf = (gateway: TestGateway) =>
      gateway.prisma.category.findMany({ orderBy: { id: 'asc' }, select: { id: true, name: true, description: true } });
    expect(await categoriesOf(planned)).toEqual(await categoriesOf(fieldByField));
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'VALIDATION_FAILED']);
  });

  it('answer generated updateCategory documents as field-by-field execution does, refusals included, and leave the same categories', async () => {
    // A category of the test's own on each database (the same id on both), to change.
    let own = '';
    for (const gateway of [planned, fieldByField]) own = String((await gateway.prisma.category.create({ data: { id: 880_000n, name: 'Changing' } })).id);
    const change = fc.record({
      category: fc.constantFrom('own', 'own', 'own', 'missing'),
      name: fc.constantFrom(undefined, undefined, 'Changed', ' Changed again ', 'Write plans', '', 'x'.repeat(101)),
      description: fc.constantFrom(undefined, undefined, null, 'Scaly', 'y'.repeat(1001)),
      selection: fc.subarray(['id', 'name', 'description', 'nodeId', '__typename', 'called: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const id = choice.category === 'missing' ? '987654321' : own;
        const input = {
          ...(choice.name === undefined ? {} : { name: choice.name }),
          ...(choice.description === undefined ? {} : { description: choice.description }),
        };
        const fields = [...choice.selection, ...(choice.relation ? ['pets { totalCount }'] : [])].join(' ');
        const request = {
          text: `mutation ChangeCategory($id: ID!, $input: CategoryChanges!) { updateCategory(id: $id, input: $input) { ${fields} } }`,
          variables: { id, input },
          scopes: choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes,
        };
        const read = { text: 'query Kind($id: ID!) { category(id: $id) { name description } }', variables: { id: own }, scopes: allScopes };
        await writeThriceOnBoth(request, tally, choice.relation, read);
      }),
      { numRuns: 25, seed: 20261128 },
    );
    const categoryOf = (gateway: TestGateway) => gateway.prisma.category.findUniqueOrThrow({ where: { id: BigInt(own) }, select: { name: true, description: true } });
    expect(await categoryOf(planned)).toEqual(await categoryOf(fieldByField));
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
  });

  it('answer generated deleteCategory documents as field-by-field execution does, refusals included, and leave the same categories', async () => {
    // Each request deletes a category made for it, alike on both databases (ids of the test's own).
    let nextId = 881_000n;
    const kinds = ['empty', 'empty', 'empty', 'withPet', 'missing', 'badId'] as const;
    const change = fc.record({
      kind: fc.constantFrom(...kinds),
      selection: fc.subarray(['id', 'name', 'description', 'nodeId', '__typename', 'called: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const fields = [...choice.selection, ...(choice.relation ? ['pets { totalCount }'] : [])].join(' ');
        const text = `mutation DropCategory($id: ID!) { deleteCategory(id: $id) { ${fields} } }`;
        const scopeList = choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes;
        const requestOf = async () => {
          if (choice.kind === 'missing') return { text, variables: { id: '987654321' }, scopes: scopeList };
          if (choice.kind === 'badId') return { text, variables: { id: 'not an id' }, scopes: scopeList };
          const id = nextId++;
          for (const gateway of [planned, fieldByField]) {
            await gateway.prisma.category.create({ data: { id, name: `Going ${id}`, description: id % 2n ? 'Soon gone' : null } });
            if (choice.kind === 'withPet') await gateway.prisma.pet.create({ data: { id: id + 10_000n, name: 'Keeps it', categoryId: id } });
          }
          return { text, variables: { id: String(id) }, scopes: scopeList };
        };
        const read = { text: 'query Kinds { categories(first: 100) { totalCount nodes { id name } } }', variables: {}, scopes: allScopes };
        await writeThriceOnBoth(requestOf, tally, choice.relation, read);
      }),
      { numRuns: 25, seed: 20261128 },
    );
    const categoriesOf = (gateway: TestGateway) =>
      gateway.prisma.category.findMany({ where: { id: { gte: 881_000n } }, orderBy: { id: 'asc' }, select: { id: true, name: true, description: true } });
    expect(await categoriesOf(planned)).toEqual(await categoriesOf(fieldByField));
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
  });

  it('answer generated deletePet documents as field-by-field execution does, refusals included, and leave the same pets, stock and orders', async () => {
    // Each request deletes a pet made for it, alike on both databases (ids of the test's own), in a category of their own.
    const category = 882_000n;
    for (const gateway of [planned, fieldByField]) await gateway.prisma.category.create({ data: { id: category, name: 'Deleted pets' } });
    let nextId = 882_000n;
    const kinds = ['plain', 'plain', 'stocked', 'finishedOrder', 'openOrder', 'missing', 'badId'] as const;
    const change = fc.record({
      kind: fc.constantFrom(...kinds),
      status: fc.constantFrom('available', 'pending', 'sold'),
      selection: fc.subarray(['id', 'name', 'status', 'categoryId', 'nodeId', '__typename', 'called: name'], { minLength: 1 }),
      relation: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      refused: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
    });
    const tally = newTally();
    await fc.assert(
      fc.asyncProperty(change, async (choice) => {
        const fields = [...choice.selection, ...(choice.relation ? ['category { name } inventory { quantity }'] : [])].join(' ');
        const text = `mutation DropPet($id: ID!) { deletePet(id: $id) { ${fields} } }`;
        const scopeList = choice.refused ? allScopes.filter((scope) => scope !== scopes.writeCatalog) : allScopes;
        const requestOf = async () => {
          if (choice.kind === 'missing') return { text, variables: { id: '987654321' }, scopes: scopeList };
          if (choice.kind === 'badId') return { text, variables: { id: 'not an id' }, scopes: scopeList };
          const id = nextId++;
          for (const gateway of [planned, fieldByField]) {
            await gateway.prisma.pet.create({ data: { id, name: `Leaving ${id}`, categoryId: category, status: choice.status } });
            if (choice.kind !== 'plain') await gateway.prisma.inventoryItem.create({ data: { petId: id, quantity: 3, status: choice.status } });
            if (choice.kind === 'finishedOrder' || choice.kind === 'openOrder') {
              await gateway.prisma.order.create({ data: { id: id + 10_000n, petId: id, quantity: 1, complete: choice.kind === 'finishedOrder' } });
            }
          }
          return { text, variables: { id: String(id) }, scopes: scopeList };
        };
        const read = {
          text: 'query Left($c: ID!) { pets(first: 100, filter: { categoryId: $c }) { totalCount nodes { id name status } } }',
          variables: { c: String(category) },
          scopes: allScopes,
        };
        await writeThriceOnBoth(requestOf, tally, choice.relation, read);
      }),
      { numRuns: 25, seed: 20261128 },
    );
    const left = async (gateway: TestGateway) => ({
      pets: await gateway.prisma.pet.findMany({ where: { categoryId: category }, orderBy: { id: 'asc' }, select: { id: true, name: true, status: true } }),
      stock: await gateway.prisma.inventoryItem.findMany({ where: { petId: { gte: 882_000n } }, orderBy: { petId: 'asc' }, select: { petId: true, quantity: true } }),
      orders: await gateway.prisma.order.findMany({ where: { petId: { gte: 882_000n } }, orderBy: { id: 'asc' }, select: { id: true, petId: true, complete: true } }),
    });
    const plannedLeft = await left(planned);
    expect(plannedLeft).toEqual(await left(fieldByField));
    // What was refused stays; what was deleted went with its stock and finished orders.
    expect(plannedLeft.orders.every((order) => !order.complete)).toBe(true);
    expectPlannedWhereverPossible(tally, ['CONFLICT', 'FORBIDDEN', 'NOT_FOUND', 'VALIDATION_FAILED']);
  });

  it('keeps plans only of writes that may have one: a mutation with no plannable write does not take the place of query plans', async () => {
    // Every mutation of the schema is plannable.
    expect(Object.values(schema.getMutationType()!.getFields()).filter((field) => !field.extensions.plannedWrite).map((field) => field.name)).toEqual([]);
    const kept = async () =>
      Number(/^petstore_cache_entries\{cache="graphql_plans"\} (\d+)/m.exec(await (await fetch(`${planned.baseUrl}/metrics`)).text())?.[1]);
    const before = await kept();
    for (let n = 1; n <= 3; n++) {
      // A document each, of a mutation that selects no write: none of them is kept.
      const typename = { text: `mutation { notKept${n}: __typename }`, variables: {}, scopes: allScopes };
      expect((await send(planned, typename)).body).toMatchObject({ data: { [`notKept${n}`]: 'Mutation' } });
    }
    expect(await kept()).toBe(before);
    await send(planned, { text: 'mutation Kept($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id } }', variables: { p: pets.plenty }, scopes: allScopes });
    expect(await kept()).toBe(before + 1);
  });
});
