import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, postGraphQL, send } from '../support/http.js';
import { arrangePets, channelPrefix, cleanUp, migratedDatabase, REDIS_URL, startProcess } from '../support/operations.js';
import { childrenOf, descendantsOf, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.js';
import { type GatewayProcess, run, stopAll } from '../support/processes.js';
import { subscribeSse, untilSubscribed } from '../support/subscriptions.js';
import { testToken } from '../support/tokens.js';

/**
 * Traces, as an operator gets them: real gateway processes (started as `npm start` starts them) with
 * nothing but the standard OTEL_* variables, exporting to an OTLP/HTTP receiver the test runs. The
 * tests read the trees that arrive: which spans, under which parent, with which attributes, in the
 * caller's trace; and that no variable, token or password is in any of them.
 */

const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;
const STATUS_ERROR = 2;

const receivers: OtlpReceiver[] = [];
const servers: Server[] = [];
afterAll(async () => {
  stopAll();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await cleanUp();
});

/** A caller's W3C trace context, sampled. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'caller=1' } };
}

const inTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((span) => span.traceId === traceId);
const named = (spans: ReceivedSpan[], name: string) => spans.find((span) => span.name === name);
/** Redis' PUBLISH commands, as the ioredis instrumentation traces them. */
const publishesOf = (spans: ReceivedSpan[]) =>
  spans.filter((span) => span.attributes['db.system.name'] === 'redis' && /publish/i.test(String(span.attributes['db.operation.name'] ?? span.name)));
const statements = (spans: ReceivedSpan[]) => spans.filter((span) => span.attributes['db.system.name'] === 'postgresql' && span.scope.includes('instrumentation-pg'));

/** The server span of a trace once it and everything beneath it (`complete`) has arrived. */
function serverSpanOf(receiver: OtlpReceiver, traceId: string, complete: (trace: ReceivedSpan[]) => boolean = () => true) {
  return receiver.waitFor((spans) => {
    const trace = inTrace(spans, traceId);
    const server = trace.find((span) => span.kind === SERVER);
    return server && complete(trace) ? { server, trace } : undefined;
  });
}

/** Every attribute value of every span received, as text, for looking for what must never be there. */
const everyAttribute = (spans: ReceivedSpan[]) =>
  spans.flatMap((span) => [...Object.values(span.attributes), ...Object.values(span.resource), span.name, span.status.message ?? '']).map((value) => JSON.stringify(value));

describe('a gateway sending traces as OTLP/JSON', () => {
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;
  let prisma: Awaited<ReturnType<typeof migratedDatabase>>['prisma'];
  let databaseUrl: string;
  let pets: { id: string; name: string }[];
  // A password in the database URL (trust authentication ignores it) that must reach no span.
  const password = `pw-${randomBytes(6).toString('hex')}`;
  let token: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    receivers.push(receiver);
    token = await testToken(['orders:write', 'orders:read', 'inventory:write']);
    const database = await migratedDatabase();
    prisma = database.prisma;
    databaseUrl = database.url.replace('postgresql://postgres@', `postgresql://postgres:${password}@`);
    ({ pets } = await arrangePets(prisma, 50, 50));
    gateway = await startProcess(databaseUrl, {
      // Nothing but the standard variables; short batches so that the test need not wait.
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-secret',
      OTEL_SERVICE_NAME: 'petstore-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      REDIS_URL,
      EVENTS_CHANNEL_PREFIX: channelPrefix(),
      DATABASE_STATEMENT_TIMEOUT_MS: '500',
      LOG_LEVEL: 'info',
    });
    receiver.spans.length = 0;
  });

  const petsQuery = /* GraphQL */ `
    query PetsByName($filter: PetFilter) {
      pets(first: 5, filter: $filter) { nodes { id name category { name } } }
    }
  `;

  it('joins the caller\'s trace with a query of a relation and reaches PostgreSQL, by its query plan and by graphql-js alike', async () => {
    // The first is executed by its plan; the second selects a field with a resolver of its own, so graphql-js executes it.
    const documents = [petsQuery, petsQuery.replace('query PetsByName($filter: PetFilter) {', 'query PetsByName($filter: PetFilter) { inventorySummary { status }')];
    const traces = [];
    for (const query of documents) {
      const caller = callerTrace();
      const answer = await postGraphQL(gateway.baseUrl, { query, variables: { filter: { nameContains: pets[0]!.name } } }, caller.headers);
      expect(answer.body.data).toMatchObject({ pets: { nodes: [{ name: pets[0]!.name }] } });
      traces.push({ caller, ...(await serverSpanOf(receiver, caller.traceId, (trace) => statements(trace).length > 0 && !!named(trace, 'query PetsByName'))) });
    }
    for (const [index, { caller, server, trace }] of traces.entries()) {
      // The caller's span is the server span's parent: the gateway's trace is the caller's.
      expect(server.parentSpanId).toBe(caller.parentId);
      expect(server.name).toBe('POST /graphql');
      expect(server.attributes).toMatchObject({ 'http.route': '/graphql', 'http.request.method': 'POST', 'http.response.status_code': 200 });
      expect(server.resource).toMatchObject({ 'service.name': 'petstore-under-test', 'deployment.environment.name': 'test' });
      const operation = childrenOf(trace, server).find((span) => span.name === 'query PetsByName')!;
      expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'PetsByName' });
      expect(operation.attributes['graphql.document.hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
      // One request, one pipeline: parsed, validated and executed under the operation span, whichever engine executes it.
      const phases = childrenOf(trace, operation).map((span) => span.name);
      expect(phases).toEqual(expect.arrayContaining(['graphql.parse', 'graphql.validate', 'graphql.execute']));
      const execute = childrenOf(trace, operation).find((span) => span.name === 'graphql.execute')!;
      expect(childrenOf(trace, execute).some((span) => span.name === 'graphql.plan')).toBe(index === 0);
      // One span per statement beneath the operation, statement text with placeholders: the plan's own statement
      // (src/database/find-many.ts) on Prisma's pool, graphql-js' through Prisma (and Prisma's own spans).
      const beneath = descendantsOf(trace, operation);
      expect(beneath.some((span) => span.name === 'prisma:client:operation')).toBe(index === 1);
      const sql = statements(beneath);
      expect(sql.length).toBeGreaterThan(0);
      expect(sql.some((span) => /FROM "public"."pets"/.test(String(span.attributes['db.query.text'])))).toBe(true);
      expect(sql.some((span) => String(span.attributes['db.query.text']).startsWith('/* petstore read */'))).toBe(index === 0);
      expect(sql.every((span) => !String(span.attributes['db.query.text']).includes(pets[0]!.name))).toBe(true);
    }
    // The request's log line carries its trace id.
    expect(gateway.output()).toMatch(new RegExp(`"traceId":"${traces[0]!.caller.traceId}"[^\\n]*"msg":"request"`));
  });

  it('traces a mutation to its published events, and each subscription delivery links to the mutation\'s trace', async () => {
    const pet = pets[1]!;
    const subscription = await subscribeSse<{ inventoryChanged: { quantity: number } }>(
      gateway.url,
      'subscription Stock($petId: ID!) { inventoryChanged(petId: $petId) { petId quantity } }',
      { variables: { petId: pet.id } },
    );
    await untilSubscribed(gateway.baseUrl, 1);
    const caller = callerTrace();
    const placed = await postGraphQL(
      gateway.baseUrl,
      { query: 'mutation Place($input: PlaceOrderInput!) { placeOrder(input: $input) { id quantity } }', variables: { input: { petId: pet.id, quantity: 3 } } },
      { ...bearer(token), ...caller.headers },
    );
    expect(placed.body.errors).toBeUndefined();
    const event = await subscription.next();
    expect(event).toMatchObject({ data: { inventoryChanged: { quantity: 47 } } });
    await subscription.close();

    // Each send ends as it is handed to ioredis, and Redis' PUBLISH beneath it when Redis answers, which may be in
    // a later export: the trace is complete once a PUBLISH has arrived for each send and for the write notice.
    const { trace } = await serverSpanOf(receiver, caller.traceId, (spans) => {
      const sends = spans.filter((span) => span.kind === PRODUCER);
      return sends.length > 0 && publishesOf(spans).length >= sends.length + 1;
    });
    const operation = named(trace, 'mutation Place')!;
    expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'mutation', 'graphql.operation.name': 'Place' });
    const beneath = descendantsOf(trace, operation);
    // An order that selects no relation is one statement, the database function place_order, in a transaction of its own.
    expect(statements(beneath).some((span) => /\bplace_order\(/.test(String(span.attributes['db.query.text'])))).toBe(true);
    const sent = beneath.filter((span) => span.kind === PRODUCER);
    const toPet = sent.find((span) => String(span.attributes['messaging.destination.name']).endsWith(`inventoryChanged:pet:${pet.id}`))!;
    expect(toPet.attributes).toMatchObject({ 'messaging.operation.type': 'send', 'messaging.system': 'redis' });
    // Redis' PUBLISH commands beneath the sends (ioredis sends the commands of one tick together, under the first send):
    // one per send, and the write notice that tells live queries on other instances what the write changed.
    const publishes = publishesOf(beneath);
    expect(publishes).toHaveLength(sent.length + 1);
    expect(publishes.every((span) => sent.some((send) => send.spanId === span.parentSpanId))).toBe(true);
    // The delivery: a span of its own trace, linked to the send of the mutation's trace.
    const delivery = await receiver.waitFor((spans) =>
      spans.find((span) => span.kind === CONSUMER && span.links.some((link) => link.traceId === caller.traceId && link.spanId === toPet.spanId)),
    );
    expect(delivery.name).toBe(`process ${String(toPet.attributes['messaging.destination.name'])}`);
    expect(delivery.traceId).not.toBe(caller.traceId);
  });

  it('names a REST read by its route, and reaches its statement', async () => {
    const caller = callerTrace();
    const answer = await send(gateway.baseUrl, `/pets/${pets[0]!.id}`, { headers: caller.headers });
    expect(answer.status).toBe(200);
    const { server, trace } = await serverSpanOf(receiver, caller.traceId, (spans) => statements(spans).length > 0);
    expect(server.name).toBe('GET /pets/{petId}');
    expect(server.attributes).toMatchObject({ 'http.route': '/pets/{petId}', 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(statements(descendantsOf(trace, server)).some((span) => /FROM "public"."pets"/.test(String(span.attributes['db.query.text'])))).toBe(true);
  });

  it('marks a refused request with its error code, and gives its trace id in the answer', async () => {
    const caller = callerTrace();
    const refused = await postGraphQL(gateway.baseUrl, { query: 'mutation Refused { placeOrder(input: { petId: "1", quantity: 1 }) { id } }' }, caller.headers);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(refused.body.extensions).toMatchObject({ traceId: caller.traceId, requestId: refused.headers.get('x-request-id') });
    const { trace } = await serverSpanOf(receiver, caller.traceId, (spans) => !!named(spans, 'mutation Refused'));
    const operation = named(trace, 'mutation Refused')!;
    expect(operation.status).toEqual({ code: STATUS_ERROR, message: 'UNAUTHENTICATED' });
    expect(operation.attributes['error.type']).toBe('UNAUTHENTICATED');

    // REST: the Error body carries the trace id beside the request id; the server span the code.
    const rest = callerTrace();
    const orders = await send(gateway.baseUrl, '/store/orders', { headers: rest.headers });
    expect(orders.status).toBe(401);
    expect(orders.body).toMatchObject({ code: 'UNAUTHENTICATED', traceId: rest.traceId, requestId: orders.headers.get('x-request-id') });
    const { server } = await serverSpanOf(receiver, rest.traceId);
    expect(server.attributes).toMatchObject({ 'http.route': '/store/orders', 'http.response.status_code': 401, 'error.type': 'UNAUTHENTICATED' });
    expect(server.status.code).toBe(STATUS_ERROR);
  });

  it('shows a statement PostgreSQL cancelled at its timeout, and the TIMEOUT it was answered with', async () => {
    // Another session holds a lock the read must wait for: the statement outlives DATABASE_STATEMENT_TIMEOUT_MS.
    const locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      const caller = callerTrace();
      const answer = await postGraphQL(gateway.baseUrl, { query: 'query Blocked { pets(first: 1) { nodes { id } } }' }, caller.headers);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT' });
      expect(answer.body.extensions).toMatchObject({ traceId: caller.traceId });
      const { trace } = await serverSpanOf(receiver, caller.traceId, (spans) => statements(spans).some((span) => span.status.code === STATUS_ERROR) && !!named(spans, 'query Blocked'));
      const cancelled = statements(trace).find((span) => span.status.code === STATUS_ERROR)!;
      expect(String(cancelled.attributes['db.query.text'])).toMatch(/FROM "public"."pets"/);
      expect(cancelled.status.message).toMatch(/statement timeout/);
      expect(named(trace, 'query Blocked')!.attributes['error.type']).toBe('TIMEOUT');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('sends the collector its headers, and no variable value, token or password in any span', async () => {
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
    expect(receiver.headers.every((headers) => headers.authorization === 'Bearer collector-secret')).toBe(true);
    const text = everyAttribute(receiver.spans).join('\n');
    expect(receiver.spans.length).toBeGreaterThan(20);
    expect(text).not.toContain(pets[0]!.name);
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]!);
    expect(text).not.toContain(password);
    expect(text).not.toContain('collector-secret');
    // Resolver spans only when asked for (GRAPHQL_RESOLVER_SPANS).
    expect(receiver.spans.filter((span) => span.name.startsWith('resolve '))).toEqual([]);
  });
});

describe('a gateway sending OTLP/protobuf with its response cache, sampling one trace in none unless the caller sampled it', () => {
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;
  const jwksRequests: IncomingHttpHeaders[] = [];
  let providerToken: () => Promise<string>;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    receivers.push(receiver);
    // An identity provider: the gateway fetches its keys, and the fetch carries the trace on.
    const pair = await generateKeyPair('RS256', { extractable: true });
    const key = { ...(await exportJWK(pair.publicKey)), kid: 'trace-key', alg: 'RS256', use: 'sig' };
    const jwks = createServer((request, response) => {
      jwksRequests.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key] }));
    });
    servers.push(jwks);
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    providerToken = () =>
      new SignJWT({ scp: ['orders:read'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'trace-key' })
        .setIssuer('https://id.example/')
        .setAudience('petstore')
        .setSubject('customer-7')
        .setExpirationTime('5m')
        .sign(pair.privateKey);
    const database = await migratedDatabase();
    gateway = await startProcess(database.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'petstore-protobuf',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      GRAPHQL_RESOLVER_SPANS: 'true',
      RESPONSE_CACHE_TTL_MS: '60000',
      AUTH_JWT_SECRET: undefined,
      AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      AUTH_ISSUER: 'https://id.example/',
      AUTH_AUDIENCE: 'petstore',
    });
  });

  it('follows a sampled caller (http/protobuf, decoded with the OTLP protos) and carries the trace to the identity provider', async () => {
    const caller = callerTrace();
    // inventorySummary has a resolver of its own: graphql-js executes the document, calling resolvers.
    const query = 'query Mine { orders(first: 1) { totalCount } inventorySummary { status } }';
    const answer = await postGraphQL<{ data: { orders: unknown } }>(gateway.baseUrl, { query }, { ...bearer(await providerToken()), ...caller.headers });
    expect(answer.body.data.orders).toEqual({ totalCount: 0 });
    const { server, trace } = await serverSpanOf(receiver, caller.traceId, (spans) => statements(spans).length > 0 && !!named(spans, 'query Mine'));
    expect(server.encoding).toBe('protobuf');
    expect(receiver.contentTypes.every((type) => type.startsWith('application/x-protobuf'))).toBe(true);
    expect(server.resource['service.name']).toBe('petstore-protobuf');
    expect(childrenOf(trace, server).map((span) => span.name)).toContain('query Mine');
    // GRAPHQL_RESOLVER_SPANS=true: the resolvers yoga called, beneath its execution.
    const execute = childrenOf(trace, named(trace, 'query Mine')!).find((span) => span.name === 'graphql.execute')!;
    expect(childrenOf(trace, execute).find((span) => span.name === 'resolve Query.orders')?.attributes).toMatchObject({
      'graphql.field.name': 'orders',
      'graphql.field.parent_type': 'Query',
    });
    // The key fetch went out with the caller's trace in its traceparent.
    expect(jwksRequests.some((headers) => String(headers.traceparent).startsWith(`00-${caller.traceId}-`))).toBe(true);
  });

  it('does not trace a request whose caller did not sample it, nor one without a caller at ratio 0', async () => {
    const unsampled = callerTrace();
    await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { totalCount } }' }, { traceparent: unsampled.headers.traceparent.replace(/-01$/, '-00') });
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { totalCount } }' });
    // A sampled request after them: once its spans are here, theirs would have been too.
    const marker = callerTrace();
    await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { totalCount } }' }, marker.headers);
    const { server, trace } = await serverSpanOf(receiver, marker.traceId);
    expect(inTrace(receiver.spans, unsampled.traceId)).toEqual([]);
    // The same query a third time: the response cache answers it, and nothing runs beneath the server span.
    expect(server.attributes['petstore.response_cache']).toBe('hit');
    expect(trace).toEqual([server]);
    expect(receiver.spans.filter((span) => span.kind === SERVER && span.traceId !== marker.traceId && span.parentSpanId === '')).toEqual([]);
    expect(answer.status).toBe(200);
  });
});

describe('tracing settings', () => {
  it('stops the gateway at start-up, in the configuration\'s words, on a bad OTEL_* value', { timeout: 60_000 }, async () => {
    const result = await run('npx', ['tsx', 'src/main.ts'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER_ARG: '10',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL');
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json');
    expect(result.stderr).toContain('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1');
  });

  it('with nothing but OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME, traces a request into the caller\'s trace down to its statements', { timeout: 60_000 }, async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const { url } = await migratedDatabase();
    const gateway = await startProcess(url, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'petstore-defaults' });
    const caller = callerTrace();
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 2) { nodes { name category { name } } } }' }, caller.headers);
    expect(answer.body.errors).toBeUndefined();
    // The default batch delay is 5 s.
    const { server, trace } = await receiver.waitFor((spans) => {
      const trace = inTrace(spans, caller.traceId);
      const server = trace.find((span) => span.kind === SERVER);
      return server && statements(trace).length > 0 ? { server, trace } : undefined;
    }, 30_000);
    expect(server.parentSpanId).toBe(caller.parentId);
    expect(server.encoding).toBe('protobuf');
    expect(server.resource['service.name']).toBe('petstore-defaults');
    expect(statements(descendantsOf(trace, server)).length).toBeGreaterThan(0);
    await gateway.stop();
  });

  it('sends nothing and answers without a trace id when no endpoint is set', { timeout: 60_000 }, async () => {
    const { url } = await migratedDatabase();
    const gateway = await startProcess(url, { OTEL_SERVICE_NAME: 'nowhere' });
    const caller = callerTrace();
    const refused = await send(gateway.baseUrl, '/store/orders', { headers: caller.headers });
    expect(refused.status).toBe(401);
    expect(refused.body).not.toHaveProperty('traceId');
    expect(refused.body).toHaveProperty('requestId');
    await gateway.stop();
  });
});
