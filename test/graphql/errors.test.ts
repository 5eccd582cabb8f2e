import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateCategoryDocument, OrdersDocument } from '../generated/graphql.js';
import { clientFor, expectError } from '../support/client.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * Unexpected failures reach a client as a masked INTERNAL error: no stack, no
 * SQL, no internal message. The database is broken on purpose here, in ways
 * the gateway cannot foresee, and put right after each test.
 */
const gateway = useTestGateway();
const client = clientFor(gateway);

const SECRET = 'secret-detail-7f3a';
let petId = '';

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
  petId = pet.id.toString();
});

const repairs: string[] = [];
afterEach(async () => {
  for (const statement of repairs.splice(0).reverse()) await gateway.prisma.$executeRawUnsafe(statement);
});

async function breakWith(statement: string, repair: string) {
  await gateway.prisma.$executeRawUnsafe(statement);
  repairs.push(repair);
}

/** Asserts a masked INTERNAL error: the fixed message, only code and status, nothing from inside. */
function expectMasked(response: Awaited<ReturnType<typeof gateway.graphql>>, leaks: string[]) {
  const error = expectError(response, 'INTERNAL');
  expect(error.extensions).toEqual({ code: 'INTERNAL', status: 500 });
  expect(error.message).toBe('Something went wrong on our side. Quote the request id when reporting it.');
  const text = JSON.stringify(response);
  const internals = ['Prisma', 'prisma', 'invocation', 'stack', '.ts:', 'node_modules', 'SELECT', 'INSERT'];
  for (const leak of [...leaks, ...internals]) expect(text).not.toContain(leak);
}

describe('unexpected errors', () => {
  it('are masked when a write fails inside the database', async () => {
    await breakWith(
      `CREATE FUNCTION refuse_category() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION '${SECRET}: INSERT INTO categories failed'; END $$;
       CREATE TRIGGER refuse_category BEFORE INSERT ON categories FOR EACH ROW EXECUTE FUNCTION refuse_category();`,
      'DROP FUNCTION refuse_category() CASCADE',
    );
    const response = await client.send(CreateCategoryDocument, { input: { name: 'Cats' } });
    expectMasked(response, [SECRET, 'refuse_category', 'categories']);
    expect(response.data).toBeNull();
    expect(await gateway.prisma.category.count({ where: { name: 'Cats' } })).toBe(0);
  });

  it('are masked when a read fails inside the database', async () => {
    await breakWith(
      'ALTER TABLE orders RENAME COLUMN ship_date TO ship_date_moved',
      'ALTER TABLE orders RENAME COLUMN ship_date_moved TO ship_date',
    );
    const response = await client.send(OrdersDocument, { first: 5 });
    expectMasked(response, ['ship_date', 'orders.']);
  });

  it('keep the rest of the answer: only the failing field is masked', async () => {
    await breakWith(
      'ALTER TABLE orders RENAME COLUMN ship_date TO ship_date_moved',
      'ALTER TABLE orders RENAME COLUMN ship_date_moved TO ship_date',
    );
    const response = await gateway.graphql<{ pet: unknown; order: unknown }>(
      'query ($id: ID!) { pet(id: $id) { id name } order(id: $id) { id shipDate } }',
      { id: petId },
    );
    expectMasked(response, ['ship_date', 'orders.']);
    expect(response.errors![0]!.path).toEqual(['order']);
    expect(response.data).toEqual({ pet: { id: petId, name: 'Rex' }, order: null });
  });

  it('answers normally again once the cause is gone', async () => {
    const { orders } = await client.ok(OrdersDocument, { first: 5 });
    expect(orders.totalCount).toBe(1);
  });

  it('carry a request id the client can quote: the X-Request-Id of the response', async () => {
    await breakWith(
      'ALTER TABLE orders RENAME COLUMN ship_date TO ship_date_moved',
      'ALTER TABLE orders RENAME COLUMN ship_date_moved TO ship_date',
    );
    const response = await fetch(`${gateway.baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'support-case-42',
        ...(await gateway.authorization()),
      },
      body: JSON.stringify({ query: '{ orders { totalCount edges { node { shipDate } } } }' }),
    });
    expect(response.headers.get('x-request-id')).toBe('support-case-42');
    expectMasked(await response.json(), ['ship_date']);
  });
});
