import { createSchema, createYoga, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createGraphQLServer } from '../../src/http/transports/yoga-server.js';
import type { RequestContext } from '../../src/http/types.js';
import { anonymous } from '../../src/auth/scopes.js';

/**
 * The gateway answers GraphQL over HTTP with yoga's own server, without yoga's generic server adapter
 * (src/http/transports/yoga-server.ts). Here both answer the same requests, a plugin on every hook the
 * adapter runs, and every answer must be the same: status, headers and body. A yoga upgrade that
 * changes what the adapter does around the server fails here.
 */

/** A plugin on the adapter's hooks and yoga's: each leaves a mark a client can see. */
function marking(): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.searchParams.has('early')) endResponse(new fetchAPI.Response('ended early', { status: 418, headers: { 'x-early': request.method } }));
    },
    onParams({ params, setParams }) {
      if (params.extensions?.rename) setParams({ ...params, operationName: String(params.extensions.rename) });
    },
    onResultProcess({ result, setResult }) {
      if (!Array.isArray(result) && !(Symbol.asyncIterator in result)) setResult({ ...result, extensions: { ...result.extensions, processed: true } });
    },
    onResponse({ response }) {
      response.headers.set('x-seen', String(response.status));
    },
  };
}

const options = (): YogaServerOptions<RequestContext, Record<string, unknown>> => ({
  schema: createSchema({
    typeDefs: 'type Query { hello(name: String): String, fail: String } type Mutation { touch: Boolean } type Subscription { ticks: Int }',
    resolvers: {
      Query: { hello: (_: unknown, { name }: { name?: string }) => `hello ${name ?? 'you'}`, fail: () => { throw new Error('broken'); } },
      Mutation: { touch: () => true },
      Subscription: { ticks: { subscribe: async function* () { yield { ticks: 1 }; yield { ticks: 2 }; } } },
    },
  }),
  fetchAPI: { Request, Response, Headers, ReadableStream, TextEncoder, TextDecoder },
  graphiql: false,
  landingPage: false,
  logging: false,
  maxRequestBodySize: false,
  plugins: [marking()],
});

const front = createGraphQLServer(options(), createLogger('silent'));
const adapter = createYoga(options());
const context = (): RequestContext => ({ requestId: 'same', principal: anonymous });

const json = { 'content-type': 'application/json' };
const requests: Array<[string, () => Request]> = [
  ['a POST', () => new Request('http://x/graphql', { method: 'POST', headers: json, body: '{"query":"{ hello }"}' })],
  ['a GET', () => new Request('http://x/graphql?query=%7B%20hello(name%3A%20%22a%22)%20%7D')],
  ['variables and an operation renamed by onParams', () => new Request('http://x/graphql', { method: 'POST', headers: json, body: JSON.stringify({ query: 'query A { a: hello } query B { b: hello }', operationName: 'A', extensions: { rename: 'B' } }) })],
  ['an answer with an error', () => new Request('http://x/graphql', { method: 'POST', headers: json, body: '{"query":"{ fail }"}' })],
  ['a syntax error', () => new Request('http://x/graphql', { method: 'POST', headers: { ...json, accept: 'application/graphql-response+json' }, body: '{"query":"{ hello"}' })],
  ['a batch', () => new Request('http://x/graphql', { method: 'POST', headers: json, body: '[{"query":"{ hello }"},{"query":"{ hello(name: \\"b\\") }"}]' })],
  ['a mutation over GET', () => new Request('http://x/graphql?query=mutation%20%7B%20touch%20%7D')],
  ['a body that is not JSON', () => new Request('http://x/graphql', { method: 'POST', headers: json, body: '{' })],
  ['an unreadable content type', () => new Request('http://x/graphql', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,b' })],
  ['an Accept nothing meets', () => new Request('http://x/graphql', { method: 'POST', headers: { ...json, accept: 'image/png' }, body: '{"query":"{ hello }"}' })],
  ['an answer ended in onRequest', () => new Request('http://x/graphql?early=1', { method: 'POST', headers: json, body: '{"query":"{ hello }"}' })],
  ['a subscription over SSE', () => new Request('http://x/graphql', { method: 'POST', headers: { ...json, accept: 'text/event-stream' }, body: '{"query":"subscription { ticks }"}' })],
];

const answerOf = async (response: Response) => ({
  status: response.status,
  headers: Object.fromEntries([...response.headers].filter(([name]) => name !== 'date')),
  body: await response.text(),
});

describe("the GraphQL front, against yoga's server adapter", () => {
  it.each(requests)('answers %s alike', async (_name, request) => {
    const ours = await answerOf(await front.handle(request(), context()));
    const yogas = await answerOf(await adapter.fetch(request(), context()));
    expect(ours).toEqual(yogas);
    // Every hook ran: the mark of onResponse is on every answer, ended early or not.
    expect(ours.headers['x-seen']).toBe(String(ours.status));
  });
});
