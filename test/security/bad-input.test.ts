import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import { defaultLimits } from '../../src/config.js';
import { bearer, databaseState, expectDocumentedError, expectRefusal, type GraphQLAnswer, postGraphQL, send } from '../support/http.js';
import { restClient } from '../support/rest.js';

/**
 * Bad input, tried on purpose, through HTTP: each request is answered with a
 * documented error (a code of src/errors.ts with its status, and the request
 * id of the X-Request-Id header), nothing is written, and the gateway still
 * answers afterwards. (Bad order quantities: test/graphql/orders/place-order.test.ts.)
 */

const gateway = useTestGateway();
const rest = restClient(gateway);
let token: string;
let dogs: string;
let rex: string;
let before: string;

beforeAll(async () => {
  token = await testToken();
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
  dogs = String(category.id);
  rex = String(pet.id);
  before = await databaseState(gateway.prisma);
});

const post = (body: string | unknown, headers: Record<string, string> = {}) =>
  postGraphQL<GraphQLAnswer>(gateway.baseUrl, body, { ...bearer(token), ...headers });

const graphql = (query: string, variables?: Record<string, unknown>) => post({ query, variables });

describe('bodies that are not GraphQL requests', () => {
  it.each([
    ['truncated JSON', '{"query": "{ __typename }"'],
    ['a trailing comma', '{"query": "{ __typename }",}'],
    ['single quotes', "{'query': '{ __typename }'}"],
    ['NaN', '{"query": "{ __typename }", "variables": {"n": NaN}}'],
    ['an empty body', ''],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"{ __typename }"'],
    ['no query', '{}'],
    ['a query that is not text', '{"query": {"text": "{ __typename }"}}'],
    ['a query that is a number', '{"query": 42}'],
    ['variables that are not an object', '{"query": "{ __typename }", "variables": "{}"}'],
    ['variables that are an array', '{"query": "{ __typename }", "variables": []}'],
    ['extensions that are not an object', '{"query": "{ __typename }", "extensions": "{}"}'],
    ['extensions that are an array', '{"query": "{ __typename }", "extensions": []}'],
    ['an unknown parameter', '{"query": "{ __typename }", "debug": true}'],
    ['an array in a batch', '[[{"query": "{ __typename }"}]]'],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1')],
  ])('%s: VALIDATION_FAILED', async (_what, body) => {
    const answer = await post(body);
    expect(answer.status).toBe(Array.isArray(answer.body) ? 200 : 400);
    expectDocumentedError(answer, 'VALIDATION_FAILED');
  });

  it('an empty batch: 400 VALIDATION_FAILED, saying what a batch may hold', async () => {
    const answer = await post('[]');
    expect(answer.status).toBe(400);
    expectDocumentedError(answer, 'VALIDATION_FAILED');
    expect(answer.body.errors?.[0]?.message).toContain(`1 to ${defaultLimits.maxBatch} operations (MAX_BATCH)`);
  });

  it.each([
    ['a number', 1],
    ['an object', { name: 'A' }],
    ['an array', ['A']],
    ['a boolean', true],
  ])('an operationName that is %s: 400 VALIDATION_FAILED under either Accept, saying so', async (what, operationName) => {
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const answer = await post({ query: 'query A { __typename }', operationName }, { accept });
      expect(answer.status, accept).toBe(400);
      expectDocumentedError(answer, 'VALIDATION_FAILED');
      expect(answer.body.errors?.[0]?.message).toBe(`The operationName parameter must be a string (or null), not ${what}.`);
      expect(answer.body).not.toHaveProperty('data');
    }
  });

  it('an operationName that is a string or null is taken', async () => {
    const query = 'query A { __typename } query B { b: __typename }';
    expect((await post({ query, operationName: 'B' })).body).toEqual({ data: { b: 'Query' } });
    expect((await post({ query: '{ __typename }', operationName: null })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('JSON nested 40,000 levels deep is read without harm', async () => {
    const deep = `{"query":"{ __typename }","variables":{"a":${'['.repeat(40_000)}${']'.repeat(40_000)}}}`;
    const answer = await post(deep);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
  });

  it.each([
    ['application/x-www-form-urlencoded', 'query=%7B%20__typename%20%7D'],
    ['application/graphql', '{ __typename }'],
    ['text/plain', '{"query": "{ __typename }"}'],
    ['text/plain;charset=UTF-8', '{"query": "{ __typename }"}'],
    ['application/xml', '<query>{ __typename }</query>'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{}\r\n--x--'],
    ['application/octet-stream', '{ __typename }'],
  ])('a body of type %s: 415 UNSUPPORTED_MEDIA_TYPE', async (type, body) => {
    const answer = await post(body, { 'content-type': type });
    expect(answer.status).toBe(415);
    expectRefusal(answer, 'UNSUPPORTED_MEDIA_TYPE', 415);
  });

  it('a mutation as an HTML form would post it: 415, nothing written', async () => {
    const mutation = 'mutation { createCategory(input: { name: "Form" }) { id } }';
    const answer = await post(`query=${encodeURIComponent(mutation)}`, {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    });
    expectRefusal(answer, 'UNSUPPORTED_MEDIA_TYPE', 415);
    expect(await gateway.prisma.category.count({ where: { name: 'Form' } })).toBe(0);
  });

  it('the same query as GET parameters is answered', async () => {
    const answer = await send<GraphQLAnswer>(gateway.baseUrl, `/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { ...bearer(token), accept: 'application/graphql-response+json' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('an Accept GraphQL cannot answer: 406 NOT_ACCEPTABLE', async () => {
    const answer = await post({ query: '{ __typename }' }, { accept: 'text/csv' });
    expect(answer.status).toBe(406);
    expectDocumentedError(answer, 'NOT_ACCEPTABLE');
  });

  it('GET for a mutation: 405 METHOD_NOT_ALLOWED, Allow: POST, nothing written', async () => {
    const mutation = `mutation { deletePet(id: "${rex}") { id } }`;
    const answer = await send<GraphQLAnswer>(gateway.baseUrl, `/graphql?query=${encodeURIComponent(mutation)}`, {
      headers: { ...bearer(token), accept: 'application/graphql-response+json' },
    });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expectDocumentedError(answer, 'METHOD_NOT_ALLOWED');
    expect(await gateway.prisma.pet.count()).toBe(1);
  });

  it.each(['PUT', 'DELETE', 'PATCH'])('%s /graphql: 405 METHOD_NOT_ALLOWED', async (method) => {
    const answer = await send<GraphQLAnswer>(gateway.baseUrl, '/graphql', {
      method,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createCategory(input: { name: "Put" }) { id } }' }),
    });
    expect(answer.status).toBe(405);
    expectDocumentedError(answer, 'METHOD_NOT_ALLOWED');
    expect(answer.headers.get('allow')).toBe('GET, POST');
    expect(await gateway.prisma.category.count({ where: { name: 'Put' } })).toBe(0);
  });

  it("PUT, as graphql-sse's single connection mode sends it, is told that only distinct connections are served", async () => {
    const answer = await send<GraphQLAnswer>(gateway.baseUrl, '/graphql', { method: 'PUT', headers: bearer(token) });
    expect(answer.status).toBe(405);
    expect(answer.body.errors?.[0]?.message).toContain("graphql-sse's distinct connections mode only");
  });
});

describe('documents that are not valid GraphQL, or too big for it', () => {
  const aliasBomb = `{ ${Array.from({ length: 500 }, (_, i) => `a${i}: pets { totalCount }`).join(' ')} }`;
  // 2^40 spreads: a walk that follows each spread (rather than each fragment once per selection)
  // would not end, where the linear ones answer in milliseconds.
  const fragmentBomb = [
    'query { ...F0 }',
    ...Array.from({ length: 40 }, (_, i) =>
      i === 39 ? `fragment F${i} on Query { __typename }` : `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    ),
  ].join('\n');
  const deepQuery = `{ ${'pets { edges { node { category { '.repeat(50)}name${' } } } }'.repeat(50)} }`;

  it.each([
    ['a syntax error', '{ pets { '],
    ['an unknown field', '{ pets { secret } }'],
    ['an unknown argument', '{ pets(sql: "1=1") { totalCount } }'],
    ['an unknown input field', `mutation { createCategory(input: { name: "X", admin: true }) { id } }`],
    ['an unknown type', 'query ($x: Secret) { __typename }'],
    ['a deep query (50 levels of 4)', deepQuery],
    ['an alias bomb (500 aliases)', aliasBomb],
    ['circular fragments', 'query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }'],
    ['a fragment spread in itself', 'query { ...A } fragment A on Query { __typename ...A }'],
    ['a 1,000-field selection of one name', `{ ${'__typename '.repeat(1_000)}}`],
    ['two operations and no name', 'query A { __typename } query B { __typename }'],
    ['a subscription to nothing', 'subscription { pets { totalCount } }'],
  ])('%s: VALIDATION_FAILED, at once, nothing run', async (_what, query) => {
    gateway.statements.length = 0;
    const started = performance.now();
    const answer = await graphql(query);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer.status).toBe(400);
    expectDocumentedError(answer, 'VALIDATION_FAILED');
    expect(answer.body).not.toHaveProperty('data');
    expect(gateway.statements).toEqual([]);
  });

  it('a fragment bomb (2^40 spreads): answered, each fragment expanded once per selection, nothing read', async () => {
    // What graphql-armor's cost limit refused before: the Cost Directives' analysis, as execution,
    // expands a fragment spread twice in one selection once, so the document costs what it selects.
    // Every other walk of the document (its deprecated fields, its dependency tags) works out each
    // fragment once too: 2^20 spreads took a second and each fragment more doubled it, before.
    gateway.statements.length = 0;
    const answer = await graphql(fragmentBomb);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
    expect(answer.cost).toMatchObject({ estimated: 0, actual: 0 });
    expect(gateway.statements).toEqual([]);
  });

  it('a batch bomb (1,000 operations): refused whole', async () => {
    gateway.statements.length = 0;
    const operations = Array(1_000).fill({ query: 'mutation { createCategory(input: { name: "Bomb" }) { id } }' });
    const answer = await post(operations);
    expect(answer.status).toBe(400);
    expectDocumentedError(answer, 'VALIDATION_FAILED');
    expect(gateway.statements).toEqual([]);
  });

  it('a batch of bad requests: each answered with its own documented error', async () => {
    const answer = await post([{ query: '{ pets { secret } }' }, { query: 'mutation { deleteCategory(id: "0") { id } }' }, {}]);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(3);
    expectDocumentedError(answer, 'VALIDATION_FAILED');
  });
});

describe('values no write accepts', () => {
  const badIds = [
    ['negative', '-1'],
    ['zero', '0'],
    ['fractional', '1.5'],
    ['exponent', '1e3'],
    ['hexadecimal', '0x10'],
    ['over int64', '9223372036854775808'],
    ['far over int64', '9'.repeat(40)],
    ['not a number', 'rex'],
    ['empty', ''],
    ['Arabic-Indic digits', '١٢'],
    ['SQL', "1; DROP TABLE pets; --"],
    ['NUL', '1\u0000'],
  ] as const;

  it.each(badIds)('a %s id: VALIDATION_FAILED naming the field, in GraphQL', async (_what, id) => {
    for (const [query, field] of [
      ['query ($id: ID!) { pet(id: $id) { id } }', 'id'],
      ['mutation ($id: ID!) { deletePet(id: $id) { id } }', 'id'],
      ['mutation ($id: ID!) { placeOrder(input: { petId: $id, quantity: 1 }) { id } }', 'petId'],
      ['mutation ($id: ID!) { createPet(input: { name: "Ghost", categoryId: $id }) { id } }', 'categoryId'],
    ] as const) {
      const answer = await graphql(query, { id });
      expectDocumentedError(answer, 'VALIDATION_FAILED');
      expect(answer.body.errors![0]!.extensions?.field, answer.text).toBe(field);
    }
  });

  it.each(badIds.filter(([, id]) => id !== ''))('a %s id: 400 VALIDATION_FAILED in REST', async (_what, id) => {
    const answer = await rest.get(`/pets/${encodeURIComponent(id)}`);
    expect(answer.status).toBe(400);
    expectDocumentedError({ ...answer, body: answer.body as GraphQLAnswer }, 'VALIDATION_FAILED');
    const orders = await rest.get(`/store/orders?petId=${encodeURIComponent(id)}`);
    expect(orders.status).toBe(400);
  });

  it('ids of the wrong JSON type: VALIDATION_FAILED', async () => {
    for (const id of [1.5, -1, true, null, [1], { id: 1 }, 9223372036854775808]) {
      expectDocumentedError(await graphql('query ($id: ID!) { pet(id: $id) { id } }', { id }), 'VALIDATION_FAILED');
    }
  });

  it('an id sent as a JSON number above 2^53 is refused, not rounded to another id', async () => {
    // JSON.parse makes 9007199254740993 into 9007199254740992 before GraphQL sees it; the variables are
    // checked by their declared types (src/http/plugins/use-rounded-id-refusal.ts) instead of looking up pet 9007199254740992.
    const ordersBefore = await gateway.prisma.order.count();
    for (const [body, field] of [
      ['{"query":"query ($id: ID!) { pet(id: $id) { id } }","variables":{"id":9007199254740993}}', 'id'],
      [
        '{"query":"mutation ($o: PlaceOrderInput!) { placeOrder(input: $o) { id } }","variables":{"o":{"petId":9007199254740993,"quantity":1}}}',
        'petId',
      ],
    ] as const) {
      const answer = await post(body);
      expectDocumentedError(answer, 'VALIDATION_FAILED');
      expect(answer.body.errors![0]!.extensions?.field).toBe(field);
      expect(answer.body.errors![0]!.message).toContain('send it as a string');
    }
    expect(await gateway.prisma.order.count()).toBe(ordersBefore);
    // The same ids as strings, or small ones as numbers, are fine.
    const exact = await post('{"query":"query ($id: ID!) { pet(id: $id) { id } }","variables":{"id":"9007199254740993"}}');
    expect(exact.body).toMatchObject({ data: { pet: null } });
    const small = await post(`{"query":"query ($id: ID!) { pet(id: $id) { id } }","variables":{"id":${rex}}}`);
    expect(small.body).toMatchObject({ data: { pet: { id: String(rex) } } });
  });

  it.each([
    ['a huge name (90,000 characters)', 'x'.repeat(90_000), 'name'],
    ['a NUL', 'Rex\u0000', 'name'],
    ['a line break inside', 'Re\nx', 'name'],
    ['an escape sequence', '\u001b[31mRex', 'name'],
    ['a C1 control character', 'Rex\u0085', 'name'],
    ['a lone surrogate', 'Rex\ud800', 'name'],
    ['only spaces', '   ', 'name'],
    ['101 emoji', '🐶'.repeat(101), 'name'],
  ])('a category with %s: VALIDATION_FAILED naming the field', async (_what, name, field) => {
    const answer = await graphql('mutation ($name: String!) { createCategory(input: { name: $name }) { id } }', { name });
    expectDocumentedError(answer, 'VALIDATION_FAILED');
    expect(answer.body.errors![0]!.extensions?.field).toBe(field);
  });

  it('a huge description, or one with a lone surrogate: VALIDATION_FAILED naming it', async () => {
    for (const description of ['d'.repeat(90_000), 'half a pair \udc00']) {
      const answer = await graphql(
        'mutation ($d: String) { createCategory(input: { name: "Described", description: $d }) { id } }',
        { d: description },
      );
      expectDocumentedError(answer, 'VALIDATION_FAILED');
      expect(answer.body.errors![0]!.extensions?.field).toBe('description');
    }
  });

  it('a NUL in a search term: VALIDATION_FAILED, not an internal error', async () => {
    const answer = await graphql('query ($s: String) { pets(filter: { nameContains: $s }) { totalCount } }', { s: 'R\u0000' });
    expectDocumentedError(answer, 'VALIDATION_FAILED');
  });

  it('unknown status values and enum-like strings: VALIDATION_FAILED', async () => {
    for (const status of ['available', 'DELETED', '', 'AVAILABLE; --']) {
      const answer = await graphql('query ($s: PetStatus) { pets(filter: { status: $s }) { totalCount } }', { s: status });
      expectDocumentedError(answer, 'VALIDATION_FAILED');
    }
  });
});

describe('values that are text, and are kept as written', () => {
  const created: string[] = [];
  afterAll(async () => {
    await gateway.prisma.category.deleteMany({ where: { id: { in: created.map(BigInt) } } });
  });

  it.each([
    ['SQL', "Robert'); DROP TABLE pets; --"],
    ['LIKE wildcards', '100% _real_ \\dogs\\'],
    ['JSON', '{"name": "x", "__proto__": {"admin": true}}'],
    ['quotes and brackets', '"\'`<>[]{}()'],
    ['HTML', '<script>alert(1)</script>'],
    ['emoji and other scripts', '🐕‍🦺 Собаки 犬 كلاب 🇳🇱'],
    ['line and paragraph separators', 'a\u2028b\u2029c'],
    ['100 emoji', '🐶'.repeat(100)],
  ])('a category named with %s: created, and read back unchanged', async (_what, name) => {
    const answer = await graphql('mutation ($name: String!) { createCategory(input: { name: $name }) { id name } }', { name });
    expect(answer.body.errors, answer.text).toBeUndefined();
    const category = (answer.body.data as { createCategory: { id: string; name: string } }).createCategory;
    created.push(category.id);
    expect(category.name).toBe(name);
    const read = await graphql('query ($id: ID!) { category(id: $id) { name } }', { id: category.id });
    expect(read.body).toEqual({ data: { category: { name } } });
  });

  it('SQL in search terms and filters finds nothing and harms nothing', async () => {
    for (const term of ["' OR 1=1 --", "'; DELETE FROM pets; --", '\\', '"']) {
      const answer = await graphql(
        'query ($s: String, $c: ID) { pets(filter: { nameContains: $s, categoryId: $c }) { totalCount } }',
        { s: term, c: dogs },
      );
      expect(answer.body, answer.text).toEqual({ data: { pets: { totalCount: 0 } } });
    }
    expect(await gateway.prisma.pet.count()).toBe(1);
  });

  it('takes % and _ in a search term literally, not as LIKE wildcards (prisma/orm#19506)', async () => {
    const search = 'query ($s: String) { pets(filter: { nameContains: $s }) { edges { node { name } } } }';
    for (const term of ['%', '_', '\\']) {
      const answer = await graphql(search, { s: term });
      expect(answer.body).toEqual({ data: { pets: { edges: [] } } });
    }
    // Arranged here and removed again: the checks at the end compare the data with how it started.
    const category = await gateway.prisma.category.create({ data: { name: 'Wildcards' } });
    const pet = await gateway.prisma.pet.create({ data: { name: 'Half_Price 50%', categoryId: category.id } });
    try {
      for (const term of ['%', '_', '0%', 'hal__price']) {
        const answer = await graphql(search, { s: term });
        const found = term === 'hal__price' ? [] : [{ node: { name: 'Half_Price 50%' } }];
        expect(answer.body, term).toEqual({ data: { pets: { edges: found } } });
      }
    } finally {
      await gateway.prisma.pet.delete({ where: { id: pet.id } });
      await gateway.prisma.category.delete({ where: { id: category.id } });
    }
  });
});

describe('request ids', () => {
  it('are the caller’s when well formed, new otherwise, and the same in header and body', async () => {
    const mine = await post({ query: '{ nope }' }, { 'x-request-id': 'trace-42.a:b' });
    expect(mine.headers.get('x-request-id')).toBe('trace-42.a:b');
    expectDocumentedError(mine, 'VALIDATION_FAILED');
    for (const given of ['has spaces', 'x'.repeat(129), 'new\u00e9line', '<script>', '']) {
      const answer = await post({ query: '{ nope }' }, { 'x-request-id': given });
      const requestId = answer.headers.get('x-request-id');
      expect(requestId).not.toBe(given);
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expectDocumentedError(answer, 'VALIDATION_FAILED');
    }
  });

  it('are on REST errors and unknown paths too', async () => {
    for (const path of ['/pets/abc', '/nowhere', '/store/orders?limit=-1']) {
      const answer = await send<GraphQLAnswer>(gateway.baseUrl, path, { headers: bearer(token) });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expectDocumentedError(answer);
    }
    const wrongMethod = await send<GraphQLAnswer>(gateway.baseUrl, '/store/orders', { method: 'DELETE', headers: bearer(token) });
    expectDocumentedError(wrongMethod, 'METHOD_NOT_ALLOWED');
  });
});

describe('after all of it', () => {
  it('nothing any refused request could have written was written', async () => {
    // (The categories with odd names were created on purpose, and are gone again.)
    expect(await databaseState(gateway.prisma)).toBe(before);
  });

  it('the gateway still answers, reads and writes', async () => {
    const answer = await graphql('{ pets { totalCount } categories { totalCount } orders { totalCount } }');
    expect(answer.body).toMatchObject({ data: { pets: { totalCount: 1 }, orders: { totalCount: 1 } } });
    const write = await graphql(`mutation { updateInventory(petId: "${rex}", input: { quantity: 5 }) { quantity } }`);
    expect(write.body).toEqual({ data: { updateInventory: { quantity: 5 } } });
  });
});
