import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import {
  bearer,
  databaseState,
  expectGraphQLError,
  expectRefusal,
  type GraphQLAnswer,
  postGraphQL,
} from '../support/http.js';
import { restClient } from '../support/rest.js';

/**
 * Time limits, made to bite without touching the gateway's code: the test
 * holds a lock in its own transaction (another connection), so the gateway's
 * statements wait on it. The request timeout answers 503 TIMEOUT; the
 * statement timeout cancels the statement (SQLSTATE 57014), answered TIMEOUT
 * too; a transaction past Prisma's time is TIMEOUT and undone; afterwards the
 * pool serves the next requests.
 */

const REQUEST_TIMEOUT_MS = 500;
const STATEMENT_TIMEOUT_MS = 300;

const requestLimited = useTestGateway({ limits: { requestTimeoutMs: REQUEST_TIMEOUT_MS } });
const statementLimited = useTestGateway({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
// Statements and requests may wait long; Prisma's interactive transactions (5 s) may not.
const transactionLimited = useTestGateway({ statementTimeoutMs: 30_000, limits: { requestTimeoutMs: 30_000 } });

let token: string;
const petIds = new Map<TestGateway, bigint>();

beforeAll(async () => {
  token = await testToken();
  for (const gateway of [requestLimited, statementLimited, transactionLimited]) {
    const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
    const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
    await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
    await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
    petIds.set(gateway, pet.id);
  }
});

/** Locks held by the test on another connection until released. */
const holders: pg.Client[] = [];
async function hold(gateway: TestGateway, statement: string, parameters: unknown[] = []) {
  const client = new pg.Client({ connectionString: gateway.databaseUrl });
  await client.connect();
  holders.push(client);
  await client.query('BEGIN');
  await client.query(statement, parameters);
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
    holders.splice(holders.indexOf(client), 1);
  };
}
afterEach(async () => {
  for (const client of holders.splice(0)) await client.end().catch(() => {});
});

const ask = (gateway: TestGateway, query: string) =>
  postGraphQL<GraphQLAnswer>(gateway.baseUrl, { query }, bearer(token));

const categoriesQuery = '{ categories { totalCount } }';
/** What categoriesQuery reads: the table's kept count (a list without a filter is not counted). */
const LOCK_THE_COUNT = 'LOCK TABLE row_counts IN ACCESS EXCLUSIVE MODE';

async function expectHealthy(gateway: TestGateway, times = 12) {
  // More requests at once than the pool has connections (10).
  const answers = await Promise.all(Array.from({ length: times }, () => ask(gateway, categoriesQuery)));
  for (const answer of answers) expect(answer.body, answer.text).toEqual({ data: { categories: { totalCount: 1 } } });
}

describe(`the request timeout (${REQUEST_TIMEOUT_MS} ms here)`, () => {
  it('answers 503 TIMEOUT at the limit on GraphQL, and the pool serves what comes next', async () => {
    const release = await hold(requestLimited, LOCK_THE_COUNT);
    const started = performance.now();
    const answer = await ask(requestLimited, categoriesQuery);
    const took = performance.now() - started;
    expectRefusal(answer, 'TIMEOUT', 503);
    expect(answer.body.message).toBe(`The request took longer than ${REQUEST_TIMEOUT_MS} ms and was stopped.`);
    expect(took).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 10);
    expect(took).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
    await release();
    await expectHealthy(requestLimited);
  });

  it('answers 503 TIMEOUT on REST, as the OpenAPI document says', async () => {
    const rest = restClient(requestLimited);
    await rest.document();
    const release = await hold(requestLimited, 'LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
    const answer = await rest.get('/store/orders');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'TIMEOUT', status: 503, requestId: answer.headers.get('x-request-id') });
    await release();
    expect((await rest.get('/store/orders')).status).toBe(200);
  });

});

describe(`the statement timeout (${STATEMENT_TIMEOUT_MS} ms here)`, () => {
  it('answers a read TIMEOUT (503) when PostgreSQL cancels its statement, without details', async () => {
    const release = await hold(statementLimited, LOCK_THE_COUNT);
    // The pets' count with a filter counts their rows, which are not held: only the categories' count waits.
    const answer = await ask(statementLimited, `{ pets(filter: { status: AVAILABLE }) { totalCount } ${categoriesQuery.slice(1, -1)} }`);
    expect(answer.status).toBe(200);
    const error = expectGraphQLError(answer, 'TIMEOUT', 503);
    expect(error.message).toBe('The database took too long to answer and the statement was stopped; try again.');
    expect(error.path).toEqual(['categories', 'totalCount']);
    expect(answer.text).not.toMatch(/57014|canceling statement|Prisma|SELECT/);
    await release();
    await expectHealthy(statementLimited);
  });

  it('answers REST 503 TIMEOUT when the statement is cancelled', async () => {
    const rest = restClient(statementLimited);
    await rest.document();
    const release = await hold(statementLimited, 'LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
    const answer = await rest.get('/store/orders');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'TIMEOUT', status: 503 });
    await release();
    expect((await rest.get('/store/orders')).status).toBe(200);
  });

  it('undoes a write whose statement is cancelled, and the same write succeeds afterwards', async () => {
    const petId = petIds.get(statementLimited)!;
    const before = await databaseState(statementLimited.prisma);
    const release = await hold(statementLimited, 'SELECT id FROM pets WHERE id = $1 FOR UPDATE', [petId]);
    const order = `mutation { placeOrder(input: { petId: "${petId}", quantity: 2 }) { quantity pet { inventory { quantity } } } }`;
    // Only the order: one statement, its own transaction, rather than the write and the read in one.
    const orderOnly = `mutation { placeOrder(input: { petId: "${petId}", quantity: 2 }) { quantity } }`;
    // More at once than the pool has connections: every one is cancelled and gives its connection back.
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(statementLimited, i % 2 ? order : orderOnly)));
    for (const answer of answers) {
      expectGraphQLError(answer, 'TIMEOUT', 503);
      expect(answer.body.data).toBeNull();
    }
    expect(await databaseState(statementLimited.prisma)).toBe(before);
    await release();
    const placed = await ask(statementLimited, order);
    expect(placed.body, placed.text).toEqual({ data: { placeOrder: { quantity: 2, pet: { inventory: { quantity: 3 } } } } });
    await expectHealthy(statementLimited);
  });
});

describe("Prisma's transaction time limit (5 s)", () => {
  it('answers TIMEOUT for a transaction that outlives it, and writes nothing', { timeout: 30_000 }, async () => {
    const petId = petIds.get(transactionLimited)!;
    const before = await databaseState(transactionLimited.prisma);
    const release = await hold(transactionLimited, 'SELECT id FROM pets WHERE id = $1 FOR UPDATE', [petId]);
    // With its pet asked for, placeOrder writes and reads in an interactive transaction (without, it is
    // one statement, bounded by the statement and request time limits above).
    const pending = ask(
      transactionLimited,
      `mutation { placeOrder(input: { petId: "${petId}", quantity: 2 }) { quantity pet { id } } }`,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    await release();
    const answer = await pending;
    const error = expectGraphQLError(answer, 'TIMEOUT', 503);
    expect(error.message).toBe('The database took too long to answer and the change was undone; try again.');
    expect(await databaseState(transactionLimited.prisma)).toBe(before);
    await expectHealthy(transactionLimited);
  });
});
