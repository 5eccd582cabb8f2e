import { request as httpRequest } from 'node:http';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { defaultLimits } from '../../src/config.js';
import { type TestGateway, useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import {
  type Answer,
  bearer,
  databaseState,
  expectGraphQLError,
  expectRefusal,
  type GraphQLAnswer,
  postGraphQL,
  withoutCost,
} from '../support/http.js';

/**
 * Query limits (graphql-armor), the batch limit and the body limit, through
 * HTTP with the default settings and with settings of our own: at a limit a
 * request runs, over it the answer is VALIDATION_FAILED (413 for the body)
 * naming the setting, before any resolver runs, so no statement and no write.
 * Last, a body limit of 4 KiB as a client meets it, sent whole and in chunks.
 */

const gateway = useTestGateway();
const small = useTestGateway({
  limits: { maxDepth: 4, maxAliases: 2, maxTokens: 40, maxCost: 30, maxDirectives: 2, maxBatch: 2, bodyBytes: 2_048 },
});
/** A body limit of 4 KiB, for the body as a client sends it on the wire. */
const bodyBytes = 4_096;
const wire = useTestGateway({ limits: { bodyBytes } });

let token: string;
beforeAll(async () => {
  token = await testToken();
  for (const { prisma } of [gateway, small]) {
    const category = await prisma.category.create({ data: { name: 'Dogs' } });
    await prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  }
});

beforeEach(() => {
  gateway.statements.length = 0;
  small.statements.length = 0;
});

const ask = (target: TestGateway, body: unknown) => postGraphQL<GraphQLAnswer>(target.baseUrl, body, bearer(token));

/** Over a limit: 400, VALIDATION_FAILED naming the setting, and nothing ran. */
async function expectOverLimit(target: TestGateway, answer: Answer<GraphQLAnswer>, setting: string) {
  expect(answer.status, answer.text).toBe(400);
  // The cost limit has a code of its own, with both numbers (test/security/demand-control.test.ts).
  const error = expectGraphQLError(answer, setting === 'MAX_COST' ? 'COST_LIMIT_EXCEEDED' : 'VALIDATION_FAILED', 400);
  expect(answer.body.errors).toHaveLength(1);
  expect(error.extensions?.limit).toBe(setting);
  expect(error.message).toContain(`the limit is the setting ${setting}`);
  expect(error.message).not.toMatch(/^Syntax Error/);
  expect(answer.body).not.toHaveProperty('data');
  expect(target.statements).toEqual([]);
}

/** A selection `depth` fields deep: pets → edges → node → category → pets → …, ending in a scalar. */
function deepSelection(depth: number): string {
  // Pages of 2: deep, and well within the cost limit (the default page of 20 would be 20 per level).
  const path = ['pets(first: 2)', 'edges', 'node', 'category'];
  const leafAfter: Record<string, string> = { 'pets(first: 2)': 'totalCount', edges: 'cursor', node: 'name', category: 'name' };
  const fields = Array.from({ length: depth - 1 }, (_, i) => path[i % path.length]!);
  const leaf = leafAfter[fields.at(-1)!]!;
  return fields.reduceRight((inner, field) => `${field} { ${inner} }`, leaf);
}

const aliases = (count: number) => Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ');
const directives = (count: number) => Array.from({ length: count }, () => '__typename @include(if: true)').join(' ');

describe('with the default limits', () => {
  it(`runs a query ${defaultLimits.maxDepth} fields deep; refuses one deeper`, async () => {
    const at = await ask(gateway, { query: `{ ${deepSelection(defaultLimits.maxDepth)} }` });
    expect(at.body.errors, at.text).toBeUndefined();
    gateway.statements.length = 0;
    const over = await ask(gateway, { query: `{ ${deepSelection(defaultLimits.maxDepth + 1)} }` });
    await expectOverLimit(gateway, over, 'MAX_DEPTH');
    expect(over.body.errors![0]!.message).toBe(
      `Query depth limit of ${defaultLimits.maxDepth} exceeded, found ${defaultLimits.maxDepth + 1} (the limit is the setting MAX_DEPTH).`,
    );
  });

  it(`runs ${defaultLimits.maxAliases} aliases; refuses more`, async () => {
    const at = await ask(gateway, { query: `{ ${aliases(defaultLimits.maxAliases)} }` });
    expect(at.body.errors, at.text).toBeUndefined();
    await expectOverLimit(gateway, await ask(gateway, { query: `{ ${aliases(defaultLimits.maxAliases + 1)} }` }), 'MAX_ALIASES');
  });

  it(`runs a document of fewer than ${defaultLimits.maxTokens} tokens; refuses a longer one`, async () => {
    // Many small operations, one of them chosen: 5 tokens each (`query Qn { __typename }`).
    const operations = (tokens: number) =>
      Array.from({ length: Math.floor(tokens / 5) }, (_, i) => `query Q${i} { __typename }`).join('\n');
    const at = await ask(gateway, { query: operations(defaultLimits.maxTokens - 50), operationName: 'Q0' });
    expect(at.body, at.text).toEqual({ data: { __typename: 'Query' } });
    const over = await ask(gateway, { query: operations(defaultLimits.maxTokens + 50), operationName: 'Q0' });
    await expectOverLimit(gateway, over, 'MAX_TOKENS');
    expect(over.body.errors![0]!.message).toBe(
      `Token limit of ${defaultLimits.maxTokens} exceeded (the limit is the setting MAX_TOKENS).`,
    );
  });

  it(`runs ${defaultLimits.maxDirectives} directives; refuses more`, async () => {
    const at = await ask(gateway, { query: `{ ${directives(defaultLimits.maxDirectives)} }` });
    expect(at.body.errors, at.text).toBeUndefined();
    await expectOverLimit(
      gateway,
      await ask(gateway, { query: `{ ${directives(defaultLimits.maxDirectives + 1)} }` }),
      'MAX_DIRECTIVES',
    );
  });

  it('runs a full page of pets with their category, stock and 5 orders each within the cost limit', async () => {
    const page = await ask(gateway, {
      query:
        '{ pets(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name status ' +
        'categoryId category { id name description } inventory { quantity status } ' +
        'orders(first: 5) { totalCount edges { node { id quantity complete } } } } } } }',
    });
    expect(page.body.errors, page.text).toBeUndefined();
  });

  it('refuses a page of 100 pets with 100 orders each, whether the sizes are written or variables', async () => {
    const nested = (size: string) =>
      `pets(first: ${size}) { edges { node { name orders(first: ${size}) { edges { node { id quantity } } } } } }`;
    const written = await ask(gateway, { query: `{ ${nested('100')} }` });
    await expectOverLimit(gateway, written, 'MAX_COST');
    const estimated = (written.body.errors![0]!.extensions!.cost as { estimated: number }).estimated;
    expect(estimated).toBe(1 + 100 * (1 + 1 + 1 + 100 * (1 + 1)));

    gateway.statements.length = 0;
    const variables = await ask(gateway, { query: `query ($n: Int) { ${nested('$n')} }`, variables: { n: 100 } });
    await expectOverLimit(gateway, variables, 'MAX_COST');
    expect(variables.body.errors![0]!.extensions).toMatchObject({ cost: { estimated, max: defaultLimits.maxCost } });

    const fewer = await ask(gateway, { query: `query ($n: Int) { ${nested('$n')} }`, variables: { n: 5 } });
    expect(fewer.body.errors, fewer.text).toBeUndefined();
  });

  it(`runs a batch of ${defaultLimits.maxBatch} operations; refuses a larger one whole`, async () => {
    const operation = { query: '{ pets { totalCount } }' };
    const at = await ask(gateway, Array(defaultLimits.maxBatch).fill(operation));
    expect(at.status).toBe(200);
    expect(at.body).toEqual(Array(defaultLimits.maxBatch).fill({ data: { pets: { totalCount: 1 } } }));
    gateway.statements.length = 0;
    const before = await databaseState(gateway.prisma);
    const write = { query: 'mutation { createCategory(input: { name: "Batched" }) { id } }' };
    const over = await ask(gateway, Array(defaultLimits.maxBatch + 1).fill(write));
    await expectOverLimit(gateway, over, 'MAX_BATCH');
    expect(over.body.errors![0]!.message).toBe(
      `Batching is limited to ${defaultLimits.maxBatch} operations per request (the limit is the setting MAX_BATCH).`,
    );
    expect(await databaseState(gateway.prisma)).toBe(before);
  });

  it(`takes a body of ${defaultLimits.bodyBytes} bytes; refuses a larger one with 413 and the Error body`, async () => {
    const body = (bytes: number) => {
      const shell = JSON.stringify({ query: '{ __typename }', variables: { padding: '' } });
      return shell.replace('"padding":""', `"padding":"${'x'.repeat(bytes - shell.length)}"`);
    };
    expect(body(defaultLimits.bodyBytes)).toHaveLength(defaultLimits.bodyBytes);
    const at = await ask(gateway, body(defaultLimits.bodyBytes));
    expect(at.status, at.text).toBe(200);
    const over = await ask(gateway, body(defaultLimits.bodyBytes + 1));
    expectRefusal(over, 'PAYLOAD_TOO_LARGE', 413);
    expect(over.body.message).toBe(`The request body is larger than ${defaultLimits.bodyBytes} bytes.`);
    expect(gateway.statements).toEqual([]);
  });
});

/** Sends `chunks` with Transfer-Encoding: chunked (no Content-Length), as a streaming client would. */
function postChunked(baseUrl: string, chunks: string[]): Promise<Answer<GraphQLAnswer>> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${baseUrl}/graphql`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const headers = new Headers(response.headers as Record<string, string>);
          resolve({ status: response.statusCode!, headers, text, body: text ? withoutCost(JSON.parse(text)).body : undefined });
        });
      },
    );
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

describe('with limits of our own', () => {
  it('honours each setting', async () => {
    const over: Array<[string, string]> = [
      ['MAX_DEPTH', `{ ${deepSelection(5)} }`],
      ['MAX_ALIASES', `{ ${aliases(3)} }`],
      ['MAX_TOKENS', `{ ${'__typename '.repeat(40)}}`],
      ['MAX_DIRECTIVES', `{ ${directives(3)} }`],
      ['MAX_COST', '{ pets(first: 40) { nodes { id } } }'],
    ];
    for (const [setting, query] of over) {
      small.statements.length = 0;
      await expectOverLimit(small, await ask(small, { query }), setting);
    }
    const within = await ask(small, { query: `{ ${deepSelection(4)} }` });
    expect(within.body.errors, within.text).toBeUndefined();
  });

  it('refuses every limit before a write runs: nothing is created', async () => {
    const before = await databaseState(small.prisma);
    const create = (selection: string) => `mutation { createCategory(input: { name: "Over" }) { ${selection} } }`;
    const documents: Array<[string, string]> = [
      ['MAX_DEPTH', create(deepSelection(4))],
      ['MAX_ALIASES', create(aliases(3))],
      ['MAX_DIRECTIVES', create(directives(3))],
      ['MAX_COST', create('pets(first: 40) { nodes { id } }')],
      ['MAX_TOKENS', create('id '.repeat(40))],
    ];
    for (const [setting, query] of documents) {
      small.statements.length = 0;
      await expectOverLimit(small, await ask(small, { query }), setting);
    }
    small.statements.length = 0;
    await expectOverLimit(small, await ask(small, Array(3).fill({ query: create('id') })), 'MAX_BATCH');
    expect(await databaseState(small.prisma)).toBe(before);
  });

  it('estimates page sizes given as variables as it estimates written ones', async () => {
    // Each document with written sizes, and the same with the sizes as variables.
    const cases: Array<[string, string, Record<string, number>]> = [
      ['{ pets(first: 10) { nodes { id } } }', 'query ($n: Int) { pets(first: $n) { nodes { id } } }', { n: 10 }],
      [
        '{ a: pets(first: 3) { edges { node { name } } } b: categories(last: 4) { totalCount } }',
        'query ($f: Int, $l: Int) { a: pets(first: $f) { edges { node { name } } } b: categories(last: $l) { totalCount } }',
        { f: 3, l: 4 },
      ],
      [
        'query { ...Q } fragment Q on Query { pets(first: 7) { edges { cursor node { id } } } }',
        'query ($n: Int) { ...Q } fragment Q on Query { pets(first: $n) { edges { cursor node { id } } } }',
        { n: 7 },
      ],
      [
        '{ pets(first: 2) { edges { node { ... on Pet { name orders(first: 3) { totalCount } } } } } }',
        'query ($p: Int, $o: Int) { pets(first: $p) { edges { node { ... on Pet { name orders(first: $o) { totalCount } } } } } }',
        { p: 2, o: 3 },
      ],
    ];
    const estimateOf = (answer: Answer<GraphQLAnswer>) => answer.cost?.estimated;
    for (const [written, withVariables, sizes] of cases) {
      const writtenAnswer = await ask(gateway, { query: written });
      expect(estimateOf(writtenAnswer), writtenAnswer.text).toBeGreaterThan(1);
      expect(estimateOf(await ask(gateway, { query: withVariables, variables: sizes }))).toBe(estimateOf(writtenAnswer));
    }
    small.statements.length = 0;
    await expectOverLimit(small, await ask(small, { query: 'query ($n: Int) { pets(first: $n) { nodes { id } } }', variables: { n: 40 } }), 'MAX_COST');
  });

  it('refuses a body over the limit sent in chunks, with no Content-Length', async () => {
    const padding = 'x'.repeat(1_000);
    const chunks = ['{"query":"{ __typename }","variables":{"padding":"', padding, padding, padding, '"}}'];
    const answer = await postChunked(small.baseUrl, chunks);
    expectRefusal(answer, 'PAYLOAD_TOO_LARGE', 413);
    const within = await postChunked(small.baseUrl, ['{"query":"{ __typename }"', ',"variables":{}}']);
    expect(within.status).toBe(200);
    expect(within.body).toEqual({ data: { __typename: 'Query' } });
    expect(small.statements).toEqual([]);
  });

  it('holds WebSocket messages to the same limit: a larger one closes its connection with 1009', async () => {
    const url = `${small.baseUrl.replace(/^http/, 'ws')}/graphql`;
    const socket = new WebSocket(url, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    // Within the limit, the connection is acknowledged as usual.
    const acknowledged = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    expect(JSON.parse(await acknowledged)).toEqual({ type: 'connection_ack' });
    const query = `{ __typename } # ${'x'.repeat(3_000)}`;
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    expect(await closed).toBe(1009);
    expect(small.statements).toEqual([]);
  });
});

const typenameQuery = '{ __typename }';
const padded = (bytes: number) => JSON.stringify({ query: typenameQuery, variables: { padding: 'x'.repeat(bytes) } });

/** A body sent chunked: no Content-Length, so the gateway must count it as it arrives. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 1_000) controller.enqueue(bytes.subarray(at, at + 1_000));
      controller.close();
    },
  });
}

/** POST /graphql to `wire`, each test with a token of its own subject. */
async function postToWire(body: BodyInit, subject: string, extra: RequestInit = {}) {
  const response = await fetch(`${wire.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await testToken([], subject)}` },
    body,
    ...extra,
  });
  return { status: response.status, headers: response.headers, json: withoutCost((await response.json()) as Record<string, unknown>).body };
}

describe(`a body limit of ${bodyBytes} bytes, on the wire`, () => {
  it('refuses a body whose Content-Length is over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const answer = await postToWire(padded(bodyBytes), 'body-1');
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(answer.json.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }),
    ]);
  });

  it('answers a body within the limit', async () => {
    const answer = await postToWire(padded(bodyBytes - 200), 'body-2');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: { __typename: 'Query' } });
  });

  it('counts a chunked body as it arrives: over the limit is refused, within it is answered', async () => {
    const over = await postToWire(chunked(padded(bodyBytes)), 'body-3', { duplex: 'half' } as RequestInit);
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const within = await postToWire(chunked(padded(1_000)), 'body-3', { duplex: 'half' } as RequestInit);
    expect(within.status).toBe(200);
    expect(within.json).toEqual({ data: { __typename: 'Query' } });
  });
});
