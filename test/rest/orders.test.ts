import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { type RestResponse, restClient } from '../support/rest.js';

const gateway = useTestGateway();
const rest = restClient(gateway);

const MAX_INT64 = 9223372036854775807n;

interface OrderJson {
  id: number;
  petId: number;
  quantity?: number;
  shipDate?: string;
  complete?: boolean;
}

let rex: bigint;
let tom: bigint;
let crowd: bigint;
/** The orders of rex and tom, by id, as the route must write them. */
let expected: OrderJson[];

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  const pet = (name: string) => gateway.prisma.pet.create({ data: { name, categoryId: category.id } });
  rex = (await pet('Rex')).id;
  tom = (await pet('Tom')).id;
  crowd = (await pet('Crowd')).id;
  const rows = [
    { petId: rex, quantity: 1 },
    { petId: rex, quantity: 2, complete: true, shipDate: new Date('2026-12-01T10:30:00+02:00') },
    { petId: tom, quantity: 3 },
    { petId: tom, quantity: 4, shipDate: new Date('2027-01-15T00:00:00Z') },
    { petId: rex, quantity: 5, complete: true, shipDate: new Date('2026-11-30T23:59:59.123Z') },
    { petId: tom, quantity: 6, complete: true, shipDate: new Date('2026-10-01T08:00:00Z') },
    { petId: rex, quantity: 7 },
  ];
  expected = [];
  for (const data of rows) {
    const order = await gateway.prisma.order.create({ data });
    expected.push({
      id: Number(order.id),
      petId: Number(order.petId),
      quantity: order.quantity,
      ...(order.shipDate ? { shipDate: order.shipDate.toISOString() } : {}),
      complete: order.complete,
    });
  }
});

const ids = (response: RestResponse) => (response.body as OrderJson[]).map((order) => order.id);
const ofPets = (orders: OrderJson[], ...pets: bigint[]) =>
  orders.filter((order) => pets.map(Number).includes(order.petId));

function expectValidationError(response: RestResponse, message: string) {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.body).toEqual({
    code: 'VALIDATION_FAILED',
    message,
    status: 400,
    requestId: response.headers.get('x-request-id'),
  });
}

describe('GET /store/orders', () => {
  it('answers the orders as spec Orders, by id', async () => {
    gateway.statements.length = 0;
    const response = await rest.get(`/store/orders?petId=${rex}`);
    // One statement, the gateway's own (src/database/find-many.ts), as GraphQL's planned order list.
    expect(gateway.statements).toHaveLength(1);
    expect(gateway.statements[0]).toMatch(/^\/\* petstore read \*\/ SELECT .* FROM "public"\."orders" .* LIMIT 51$/);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body).toEqual(ofPets(expected, rex));
    const [first, second] = ofPets(expected, rex);
    const opening =
      `[{"id":${first!.id},"petId":${rex},"quantity":1,"complete":false},` +
      `{"id":${second!.id},"petId":${rex},"quantity":2,"shipDate":"2026-12-01T08:30:00.000Z","complete":true},`;
    expect(response.text.slice(0, opening.length)).toBe(opening);
    expect(response.headers.get('link')).toBeNull();
    expect(response.headers.get('deprecation')).toBeNull();
  });

  it('leaves out a field without a value instead of writing null', async () => {
    const response = await rest.get(`/store/orders?petId=${rex}&complete=false`);
    const orders = response.body as OrderJson[];
    expect(orders).toHaveLength(2);
    for (const order of orders) expect(order).not.toHaveProperty('shipDate');
    expect(response.text).not.toContain('null');
    expect(response.text).not.toContain('shipDate');
  });

  it('writes shipDate as ISO 8601 in UTC', async () => {
    const response = await rest.get(`/store/orders?complete=true`);
    const dates = (response.body as OrderJson[]).map((order) => order.shipDate);
    expect(dates).toEqual(['2026-12-01T08:30:00.000Z', '2026-11-30T23:59:59.123Z', '2026-10-01T08:00:00.000Z']);
  });

  it('filters by complete and by pet', async () => {
    const complete = await rest.get('/store/orders?complete=true');
    expect(complete.body).toEqual(expected.filter((order) => order.complete));
    const open = await rest.get('/store/orders?complete=false');
    expect(open.body).toEqual(expected.filter((order) => !order.complete));
    const tomsOpen = await rest.get(`/store/orders?petId=${tom}&complete=false`);
    expect(tomsOpen.body).toEqual(ofPets(expected, tom).filter((order) => !order.complete));
    const nobody = await rest.get('/store/orders?petId=424242');
    expect(nobody.status).toBe(200);
    expect(nobody.text).toBe('[]');
  });

  it('treats an empty parameter as not given and ignores unknown ones', async () => {
    const response = await rest.get(`/store/orders?complete=&petId=${rex}&limit=&offset=&_=12345`);
    expect(response.body).toEqual(ofPets(expected, rex));
  });

  it('writes int64 ids above 2^53 digit for digit', async () => {
    const category = await gateway.prisma.category.create({ data: { name: 'Big ids' } });
    const pet = await gateway.prisma.pet.create({ data: { id: MAX_INT64 - 1n, name: 'Big', categoryId: category.id } });
    await gateway.prisma.order.create({ data: { id: MAX_INT64, petId: pet.id, quantity: 1 } });
    const response = await rest.get(`/store/orders?petId=${pet.id}`);
    expect(response.text).toBe(
      '[{"id":9223372036854775807,"petId":9223372036854775806,"quantity":1,"complete":false}]',
    );
  });
});

describe('paging', () => {
  it('pages with limit and offset, by id, with Link rel="next" while more remain', async () => {
    const all = ofPets(expected, rex, tom).map((order) => order.id);
    const seen: number[] = [];
    let next: string | undefined = `/store/orders?limit=3`;
    const links: string[] = [];
    while (next) {
      const response = await rest.get(next);
      expect(response.status).toBe(200);
      seen.push(...ids(response).filter((id) => all.includes(id)));
      const link = response.headers.get('link');
      next = link?.match(/^<([^>]+)>; rel="next"$/)?.[1];
      if (next) links.push(next);
    }
    expect(seen).toEqual(all);
    expect(links.slice(0, 2)).toEqual(['/store/orders?limit=3&offset=3', '/store/orders?limit=3&offset=6']);
  });

  it('keeps the filters in the next link', async () => {
    const first = await rest.get(`/store/orders?petId=${rex}&complete=false&limit=1`);
    expect(ids(first)).toEqual([ofPets(expected, rex).filter((order) => !order.complete)[0]!.id]);
    expect(first.headers.get('link')).toBe(`</store/orders?complete=false&petId=${rex}&limit=1&offset=1>; rel="next"`);
    const second = await rest.get(`/store/orders?complete=false&petId=${rex}&limit=1&offset=1`);
    expect(ids(second)).toEqual([ofPets(expected, rex).filter((order) => !order.complete)[1]!.id]);
    expect(second.headers.get('link')).toBeNull();
  });

  it('sends no next link when the page ends exactly at the last order, or lies beyond it', async () => {
    const rexOrders = ofPets(expected, rex);
    const exact = await rest.get(`/store/orders?petId=${rex}&limit=${rexOrders.length}`);
    expect(ids(exact)).toEqual(rexOrders.map((order) => order.id));
    expect(exact.headers.get('link')).toBeNull();
    const beyond = await rest.get(`/store/orders?petId=${rex}&offset=1000`);
    expect(beyond.text).toBe('[]');
    expect(beyond.headers.get('link')).toBeNull();
  });

  it('gives 50 to a page unless asked, and up to 100', async () => {
    await gateway.prisma.order.createMany({ data: Array.from({ length: 120 }, () => ({ petId: crowd, quantity: 1 })) });
    const first = await rest.get(`/store/orders?petId=${crowd}`);
    expect(first.body).toHaveLength(50);
    expect(first.headers.get('link')).toBe(`</store/orders?petId=${crowd}&limit=50&offset=50>; rel="next"`);
    const hundred = await rest.get(`/store/orders?petId=${crowd}&limit=100`);
    expect(hundred.body).toHaveLength(100);
    const rest20 = await rest.get(`/store/orders?petId=${crowd}&limit=100&offset=100`);
    expect(rest20.body).toHaveLength(20);
    expect(rest20.headers.get('link')).toBeNull();
  });
});

describe('errors of GET /store/orders', () => {
  it.each([
    ['limit=0', 'limit must be a whole number from 1 to 100'],
    ['limit=101', 'limit must be a whole number from 1 to 100'],
    ['limit=ten', 'limit must be a whole number from 1 to 100'],
    ['limit=1.5', 'limit must be a whole number from 1 to 100'],
    ['offset=-1', 'offset must be a whole number from 0 to 2147483647'],
    ['offset=2147483648', 'offset must be a whole number from 0 to 2147483647'],
    ['offset=x', 'offset must be a whole number from 0 to 2147483647'],
    ['complete=yes', 'complete must be true or false, got "yes".'],
    ['petId=abc', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "abc".'],
    ['petId=0', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "0".'],
    ['limit=1&limit=2', 'limit may be given only once, got 2 values.'],
  ])('answers 400 VALIDATION_FAILED naming the parameter for %s', async (query, message) => {
    expectValidationError(await rest.get(`/store/orders?${query}`), message);
  });

  it('uses the code and status GraphQL gives the same bad filter', async () => {
    const graphql = await gateway.graphql('{ orders(filter: { petId: "abc" }) { totalCount } }');
    const response = await rest.get('/store/orders?petId=abc');
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
  });

  it('answers 405 with Allow for any other method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await rest.request('/store/orders', { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(response.body).toEqual({
        code: 'METHOD_NOT_ALLOWED',
        message: `${method} is not allowed on /store/orders; it answers GET, HEAD.`,
        status: 405,
        requestId: response.headers.get('x-request-id'),
      });
    }
  });

  it('answers 406 when the caller accepts no JSON', async () => {
    const response = await rest.get('/store/orders', { accept: 'text/csv' });
    expect(response.status).toBe(406);
    expect(response.body).toEqual({
      code: 'NOT_ACCEPTABLE',
      message: 'These routes answer application/json only; the Accept header allows none.',
      status: 406,
      requestId: response.headers.get('x-request-id'),
    });
  });
});

describe('HEAD and conditional requests', () => {
  it('answers HEAD with the headers of GET, Link included, and no body', async () => {
    const get = await rest.get('/store/orders?limit=2');
    const head = await rest.request('/store/orders?limit=2', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const name of ['content-type', 'etag', 'link']) expect(head.headers.get(name)).toBe(get.headers.get(name));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
  });

  it('answers 304 while the page is unchanged, 200 once an order changes', async () => {
    const path = `/store/orders?petId=${tom}`;
    const etag = (await rest.get(path)).headers.get('etag')!;
    const unchanged = await rest.get(path, { 'if-none-match': etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.get('etag')).toBe(etag);
    const [order] = ofPets(expected, tom);
    await gateway.prisma.order.update({ where: { id: BigInt(order!.id) }, data: { quantity: 9 } });
    const changed = await rest.get(path, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    await gateway.prisma.order.update({ where: { id: BigInt(order!.id) }, data: { quantity: order!.quantity! } });
  });
});

describe('unknown paths', () => {
  it.each(['/', '/pets', '/pets/', '/pets/1/orders', '/store', '/store/orders/1', '/store/inventory', '/nope'])(
    'answers 404 NOT_FOUND as an Error body for %s',
    async (path) => {
      const response = await rest.get(path);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.body).toEqual({
        code: 'NOT_FOUND',
        message: `No route for GET ${path}.`,
        status: 404,
        requestId: response.headers.get('x-request-id'),
      });
    },
  );

  it('answers HEAD of an unknown path with 404 and no body', async () => {
    const response = await rest.request('/nope', { method: 'HEAD' });
    expect(response.status).toBe(404);
    expect(response.text).toBe('');
  });
});

describe('an unexpected failure', () => {
  it('answers 500 INTERNAL with a masked message', async () => {
    await gateway.prisma.$executeRawUnsafe('ALTER TABLE orders RENAME TO orders_away');
    try {
      const response = await rest.get('/store/orders');
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.body).toEqual({
        code: 'INTERNAL',
        message: 'Something went wrong on our side. Quote the request id when reporting it.',
        status: 500,
        requestId: response.headers.get('x-request-id'),
      });
    } finally {
      await gateway.prisma.$executeRawUnsafe('ALTER TABLE orders_away RENAME TO orders');
    }
  });
});
