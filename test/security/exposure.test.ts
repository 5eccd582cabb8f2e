import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import { bearer, expectGraphQLError, type GraphQLAnswer, postGraphQL, send } from '../support/http.js';

/**
 * What the gateway shows of itself: introspection and field suggestions (on
 * by default, off with INTROSPECTION=false), GraphiQL (off with GRAPHIQL=false,
 * and by default in production, see development-and-production.test.ts), and which
 * browser origins may call it (CORS_ORIGINS).
 */

const open = useTestGateway();
const closed = useTestGateway({ introspection: false, graphiql: false });
const shop = 'https://shop.example';
const withCors = useTestGateway({ corsOrigins: [shop, 'https://admin.shop.example'] });
const anyOrigin = useTestGateway({ corsOrigins: ['*'] });

let token: string;
beforeAll(async () => {
  token = await testToken();
});

const ask = (baseUrl: string, query: string, variables?: Record<string, unknown>) =>
  postGraphQL<GraphQLAnswer>(baseUrl, { query, variables }, bearer(token));

/** Misspellings graphql-js answers with a suggestion, at validation or (variables) at execution. */
const misspelt: Array<[string, string, Record<string, unknown>?]> = [
  ['a field', '{ petz { totalCount } }'],
  ['a field of a type', '{ pets { totalCont } }'],
  ['an argument', '{ pets(frist: 1) { totalCount } }'],
  ['an enum value', '{ pets(filter: { status: AVAILABL }) { totalCount } }'],
  ['an input field', '{ pets(filter: { nameContain: "x" }) { totalCount } }'],
  ['a type', 'query ($s: PetStatu) { pets(filter: { status: $s }) { totalCount } }'],
  [
    'an enum value in variables',
    'query ($s: PetStatus) { pets(filter: { status: $s }) { totalCount } }',
    { s: 'AVAILABL' },
  ],
  [
    'an input field in variables',
    'query ($f: PetFilter) { pets(filter: $f) { totalCount } }',
    { f: { nameContain: 'x' } },
  ],
];

describe('introspection', () => {
  it('is on by default: __schema and __type answer, and misspellings get suggestions', async () => {
    const schema = await ask(open.baseUrl, '{ __schema { queryType { name } } __type(name: "Pet") { name } }');
    expect(schema.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } }, __type: { name: 'Pet' } } });
    for (const [what, query, variables] of misspelt) {
      const answer = await ask(open.baseUrl, query, variables);
      expectGraphQLError(answer, 'VALIDATION_FAILED', 400);
      expect(answer.text, what).toContain('Did you mean');
    }
  });

  it('when off, refuses __schema and __type as VALIDATION_FAILED before anything runs', async () => {
    for (const query of [
      '{ __schema { types { name } } }',
      '{ __type(name: "Pet") { fields { name } } }',
      '{ pets { totalCount } __schema { queryType { name } } }',
      'query { ...Sneaky } fragment Sneaky on Query { __type(name: "Order") { name } }',
      // The schema's description alone answers (below): not with anything else of __schema beside it.
      '{ __schema { description ...Shape } } fragment Shape on __Schema { directives { name } }',
    ]) {
      closed.statements.length = 0;
      const answer = await ask(closed.baseUrl, query);
      expect(answer.status).toBe(400);
      const error = expectGraphQLError(answer, 'VALIDATION_FAILED', 400);
      expect(error.message).toMatch(/introspection has been disabled/);
      expect(answer.body).not.toHaveProperty('data');
      expect(closed.statements).toEqual([]);
    }
    // __typename is not introspection: clients need it. Nor is the schema's description, the contract's version.
    expect((await ask(closed.baseUrl, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
    const description = await ask(closed.baseUrl, '{ __schema { description } }');
    expect(description.body).toEqual({ data: { __schema: { description: expect.stringContaining('Contract version:') } } });
  });

  it('when off, hides every suggestion of a name', async () => {
    for (const [what, query, variables] of misspelt) {
      const answer = await ask(closed.baseUrl, query, variables);
      expectGraphQLError(answer, 'VALIDATION_FAILED', 400);
      expect(answer.text, what).not.toMatch(/Did you mean|PetStatus"|AVAILABLE|nameContains|"pets"|totalCount"/);
    }
  });
});

describe('GraphiQL', () => {
  it('is served by default; when off, a browser gets no page', async () => {
    const page = await send(open.baseUrl, '/graphql', { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const none = await send(closed.baseUrl, '/graphql', { headers: { accept: 'text/html' } });
    expect(none.headers.get('content-type')).not.toMatch(/html/);
    expect(none.text).not.toContain('<html');
    // Only JSON is served there then: 406 with the Error body.
    expect(none.status).toBe(406);
    expect(none.body).toMatchObject({ code: 'NOT_ACCEPTABLE', status: 406, requestId: none.headers.get('x-request-id') });
  });

  it('when off, a browser that opens /graphql is told why there is no page, in the documented error shape', async () => {
    const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const answer = await send<GraphQLAnswer>(closed.baseUrl, '/graphql', { headers: { accept: browser } });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const error = answer.body.errors?.[0];
    expect(error?.message).toContain('GraphiQL is not served here (GRAPHIQL=false, the default in production)');
    expect(error?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(answer.body.extensions).toMatchObject({ requestId: answer.headers.get('x-request-id') });
    // A query in the URL is still answered, and where GraphiQL is on the browser gets the page.
    const query = await send<GraphQLAnswer>(closed.baseUrl, `/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: browser } });
    expect(query.body).toMatchObject({ data: { __typename: 'Query' } });
    const page = await send(open.baseUrl, '/graphql', { headers: { accept: browser } });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('CORS_ORIGINS', () => {
  const preflight = (baseUrl: string, origin: string) =>
    send(baseUrl, '/graphql', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

  it('lets an allowed origin read the answers, including refusals, and their headers', async () => {
    for (const origin of [shop, 'https://admin.shop.example']) {
      const answer = await postGraphQL(withCors.baseUrl, { query: '{ __typename }' }, { origin });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      // The answer differs by origin: a shared cache must not give one origin's answer to another.
      expect(answer.headers.get('vary')).toContain('Origin');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(answer.headers.get('access-control-expose-headers')?.split(',')).toEqual(
        expect.arrayContaining(['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After']),
      );
    }
    const refused = await postGraphQL(withCors.baseUrl, { query: '{ __typename }' }, { origin: shop, authorization: 'Bearer x' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(shop);
  });

  it('answers an allowed preflight with the method and headers asked for', async () => {
    const answer = await preflight(withCors.baseUrl, shop);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(shop);
    expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
    expect(answer.headers.get('access-control-allow-headers')).toBe('authorization,content-type');
    expect(answer.headers.get('vary')).toContain('Origin');
  });

  it('gives another origin no Access-Control-Allow-Origin, in answers and preflights', async () => {
    const evil = 'https://evil.example';
    const answer = await postGraphQL(withCors.baseUrl, { query: '{ __typename }' }, { origin: evil });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(withCors.baseUrl, evil)).headers.get('access-control-allow-origin')).toBeNull();
    // With no CORS_ORIGINS (the default) no origin is allowed: not even GraphQL's own default lets one in.
    for (const origin of [shop, evil]) {
      const answer = await postGraphQL(open.baseUrl, { query: '{ __typename }' }, { origin });
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect((await preflight(open.baseUrl, origin)).headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('allows every origin with CORS_ORIGINS=*', async () => {
    const answer = await postGraphQL(anyOrigin.baseUrl, { query: '{ __typename }' }, { origin: 'https://anyone.example' });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect((await preflight(anyOrigin.baseUrl, 'https://anyone.example')).headers.get('access-control-allow-origin')).toBe('*');
  });
});
