import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { postGraphQL } from '../support/http.js';
import { connectWebSocket, openSubscriptions, subscribeSse, waitFor } from '../support/subscriptions.js';

/**
 * GET /metrics of the real server process, in the Prometheus text format:
 * requests and latency by operation and status, errors by code, pool use,
 * event loop lag, open subscriptions, and the use of the deprecated lookup
 * (GraphQL getPetById, REST GET /pets/{petId}) per client. Then, on a
 * gateway in this process: deprecated use counted each time a document is sent
 * again, requests named by the operation run, and the open-subscription gauge
 * over SSE and WebSocket; and the bounds on label values.
 */

let gateway: GatewayProcess;
let baseUrl: string;
let petId: string;

beforeAll(async () => {
  const database = await migratedDatabase();
  petId = (await arrangePets(database.prisma, 2)).pets[0]!.id;
  // A sunset far ahead, so the legacy lookup answers whatever today's date.
  gateway = await startProcess(database.url, {
    LEGACY_SUNSET_DATE: '2099-12-31',
    DATABASE_POOL_SIZE: '3',
    METRICS_CLIENT_CLAIM: 'azp',
  });
  baseUrl = gateway.baseUrl;
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  stopAll();
  await cleanUp();
});

/** A gateway in this process (test/support/gateway.ts), with a database of its own, beside the real process. */
const inProcess = useTestGateway();

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (enough of it for these tests). */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      types.set(name!, type!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { samples, types };
}

async function scrape() {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

/** The value of the sample with exactly these labels among `name`'s (0 when absent). */
function valueOf(metrics: { samples: Sample[] }, name: string, labels: Record<string, string> = {}): number {
  const found = metrics.samples.find(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found?.value ?? 0;
}

const bearer = async (subject: string, granted: readonly string[] = Object.values(scopes)) => ({
  authorization: `Bearer ${await testToken(granted, subject)}`,
});

describe('GET /metrics', () => {
  it('is the Prometheus text format, public, with the process metrics and event loop lag', async () => {
    const metrics = await scrape();
    expect(metrics.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(valueOf(metrics, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(metrics.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(metrics.types.get('petstore_requests_total')).toBe('counter');
    expect(metrics.types.get('petstore_request_duration_seconds')).toBe('histogram');
    expect(metrics.types.get('petstore_errors_total')).toBe('counter');
    expect(metrics.types.get('petstore_open_subscriptions')).toBe('gauge');
    expect(metrics.types.get('petstore_deprecated_use_total')).toBe('counter');
  });

  it('counts requests and their latency by GraphQL operation name (or REST route) and status', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const answer = await postGraphQL(gateway.baseUrl, { query: 'query MetricsPetPage { pets(first: 1) { totalCount } }' });
      expect(answer.status).toBe(200);
    }
    await postGraphQL(gateway.baseUrl, { query: '{ __typename }' });
    expect((await fetch(`${baseUrl}/pets/${petId}`)).status).toBe(200);
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('petstore_requests_total', { operation: 'MetricsPetPage', status: '200' })).toBe(3);
    expect(delta('petstore_requests_total', { operation: 'query', status: '200' })).toBe(1);
    expect(delta('petstore_requests_total', { operation: 'GET /pets/:petId', status: '200' })).toBe(1);
    expect(delta('petstore_request_duration_seconds_count', { operation: 'MetricsPetPage', status: '200' })).toBe(3);
    expect(delta('petstore_request_duration_seconds_bucket', { operation: 'MetricsPetPage', status: '200', le: '+Inf' })).toBe(3);
    expect(valueOf(after, 'petstore_request_duration_seconds_sum', { operation: 'MetricsPetPage', status: '200' })).toBeGreaterThan(0);
  });

  it('counts errors by code: GraphQL (parse, validation, scopes, domain rules), guards and REST', async () => {
    const before = await scrape();
    const token = await bearer('metrics-errors');
    // GraphQL: a syntax error, an unknown field, a write without a token, an order over the stock.
    await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { ' });
    await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { noSuchField } }' });
    await postGraphQL(gateway.baseUrl, { query: 'mutation { createCategory(input: { name: "nope" }) { id } }' });
    const over = await postGraphQL(gateway.baseUrl, { query: 'mutation ($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 99 }) { id } }', variables: { petId } }, token);
    expect(JSON.stringify(over.body)).toContain('INSUFFICIENT_STOCK');
    // Guards: a token that is not one, on GraphQL and on REST.
    await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, { authorization: 'Bearer not-a-token' });
    await fetch(`${baseUrl}/store/orders`, { headers: { authorization: 'Bearer not-a-token' } });
    // REST: no such pet, no token for orders, no such route.
    expect((await fetch(`${baseUrl}/pets/999999999`)).status).toBe(404);
    expect((await fetch(`${baseUrl}/store/orders`)).status).toBe(401);
    expect((await fetch(`${baseUrl}/no/such/route`)).status).toBe(404);
    // Refused by yoga before any GraphQL runs: a body that is not JSON (VALIDATION_FAILED, as yoga's
    // own refusals are given our codes; see src/http/plugins/use-error-masking.ts).
    await fetch(`${baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    const after = await scrape();

    const delta = (code: string) =>
      valueOf(after, 'petstore_errors_total', { code }) - valueOf(before, 'petstore_errors_total', { code });
    expect({
      VALIDATION_FAILED: delta('VALIDATION_FAILED'),
      UNAUTHENTICATED: delta('UNAUTHENTICATED'),
      INSUFFICIENT_STOCK: delta('INSUFFICIENT_STOCK'),
      NOT_FOUND: delta('NOT_FOUND'),
      BAD_REQUEST: delta('BAD_REQUEST'),
    }).toEqual({ VALIDATION_FAILED: 3, UNAUTHENTICATED: 4, INSUFFICIENT_STOCK: 1, NOT_FOUND: 2, BAD_REQUEST: 0 });
  });

  it('shows the database pool by state', async () => {
    await postGraphQL(gateway.baseUrl, { query: '{ pets(first: 1) { totalCount } }' });
    const metrics = await scrape();
    expect(metrics.types.get('petstore_db_pool_connections')).toBe('gauge');
    const total = valueOf(metrics, 'petstore_db_pool_connections', { state: 'total' });
    expect(total).toBeGreaterThanOrEqual(1);
    expect(total).toBeLessThanOrEqual(3);
    expect(valueOf(metrics, 'petstore_db_pool_connections', { state: 'idle' })).toBeLessThanOrEqual(total);
    expect(metrics.samples.some((s) => s.name === 'petstore_db_pool_connections' && s.labels.state === 'waiting')).toBe(true);
  });

  it('counts open subscriptions, up while they are open and down once they end', async () => {
    const open = async () => valueOf(await scrape(), 'petstore_open_subscriptions');
    expect(await open()).toBe(0);
    const sse = await subscribeSse(gateway.url, 'subscription { petStatusChanged { petId } }');
    await waitFor(async () => (await open()) === 1, 'one open subscription');
    const socket = await connectWebSocket(gateway.url);
    const ws = socket.subscribe('subscription { inventoryChanged { petId } }');
    await waitFor(async () => (await open()) === 2, 'two open subscriptions');
    await sse.close();
    await waitFor(async () => (await open()) === 1, 'the SSE subscription to end');
    await ws.close();
    await socket.dispose();
    await waitFor(async () => (await open()) === 0, 'no open subscription');
  });

  it('counts the use of getPetById and of GET /pets/{petId} per client application (METRICS_CLIENT_CLAIM), never per subject', async () => {
    const before = await scrape();
    const legacyQuery = 'query Legacy($id: ID!) { getPetById(petId: $id) { id } }';
    const app = async (client: string | undefined, subject: string) => ({
      authorization: `Bearer ${await testToken([], subject, { claims: client ? { azp: client } : {} })}`,
    });
    for (const headers of [await app('shop-frontend', 'alice'), await app('shop-frontend', 'ann'), {}, await app(undefined, 'carol')]) {
      const answer = await postGraphQL(gateway.baseUrl, { query: legacyQuery, variables: { id: petId } }, headers);
      expect(answer.body, JSON.stringify(answer.body)).toEqual({
        data: { getPetById: { id: petId } },
        extensions: { deprecations: [{ field: 'Query.getPetById', reason: `Use pet(id:) instead. getPetById will be removed on 2099-12-31 (sunset date).`, sunset: '2099-12-31' }] },
      });
    }
    // Through fragments spread twice: each selection of the field through each spread is a use.
    const spreads = [
      'query Spread($id: ID!) { ...Twice }',
      'fragment Twice on Query { ...Legacy ...Legacy }',
      'fragment Legacy on Query { a: getPetById(petId: $id) { id } ...Again ...Again }',
      'fragment Again on Query { b: getPetById(petId: $id) { id } }',
    ].join('\n');
    const spreadAnswer = await postGraphQL(gateway.baseUrl, { query: spreads, variables: { id: petId } }, await app('spreading-app', 'dora'));
    expect(spreadAnswer.body, JSON.stringify(spreadAnswer.body)).toMatchObject({ data: { a: { id: petId }, b: { id: petId } } });
    // The replacement is not counted.
    await postGraphQL(gateway.baseUrl, { query: 'query ($id: ID!) { pet(id: $id) { id } }', variables: { id: petId } }, await app('shop-frontend', 'alice'));
    await fetch(`${baseUrl}/pets/${petId}`, { headers: await app('legacy-app', 'bob') });
    await fetch(`${baseUrl}/pets/${petId}`, { method: 'HEAD' });
    // A method the route refuses is not a use of it.
    await fetch(`${baseUrl}/pets/${petId}`, { method: 'DELETE' });
    const after = await scrape();

    const delta = (target: string, client: string) =>
      valueOf(after, 'petstore_deprecated_use_total', { target, client }) -
      valueOf(before, 'petstore_deprecated_use_total', { target, client });
    expect(delta('Query.getPetById', 'shop-frontend')).toBe(2);
    // a once per Legacy spread (2), b once per Again spread in each (2 × 2): six selections.
    expect(delta('Query.getPetById', 'spreading-app')).toBe(6);
    expect(delta('Query.getPetById', 'anonymous')).toBe(1);
    // A token without the claim counts as authenticated: its subject is personal data and unbounded.
    expect(delta('Query.getPetById', 'authenticated')).toBe(1);
    const clients = after.samples.filter((s) => s.name === 'petstore_deprecated_use_total').map((s) => s.labels.client);
    for (const subject of ['alice', 'ann', 'bob', 'carol']) expect(clients).not.toContain(subject);
    expect(delta('GET /pets/{petId}', 'legacy-app')).toBe(1);
    expect(delta('GET /pets/{petId}', 'anonymous')).toBe(1);
    const targets = new Set(
      after.samples.filter((s) => s.name === 'petstore_deprecated_use_total').map((s) => s.labels.target),
    );
    expect(targets).toEqual(new Set(['Query.getPetById', 'GET /pets/{petId}']));
  });
});

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${inProcess.baseUrl}/metrics`)).text();
  const found = text.split('\n').find((row) => line.test(row));
  return found ? Number(found.slice(found.lastIndexOf(' ') + 1)) : 0;
}

const legacyUse = /^petstore_deprecated_use_total\{target="Query\.getPetById",client="authenticated"\}/;

describe('metrics of GraphQL operations', () => {
  let petId: string;
  beforeAll(async () => {
    const category = await inProcess.prisma.category.create({ data: { name: 'Observed' } });
    petId = (await inProcess.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } })).id.toString();
  });

  it('counts every use of a deprecated field, each time the same document is sent again', async () => {
    const document = 'query Legacy($id: ID!) { getPetById(petId: $id) { id } }';
    const before = await metric(legacyUse);
    for (let i = 0; i < 3; i++) expect((await inProcess.graphql(document, { id: petId })).errors).toBeUndefined();
    expect(await metric(legacyUse)).toBe(before + 3);

    const twice = 'query LegacyTwice($id: ID!) { a: getPetById(petId: $id) { id } b: getPetById(petId: $id) { id } }';
    expect((await inProcess.graphql(twice, { id: petId })).errors).toBeUndefined();
    expect(await metric(legacyUse)).toBe(before + 5);
  });

  it('names each request by the operation it ran, also in a document with several', async () => {
    const document = 'query First { pets(first: 1) { edges { node { id } } } } query Second { categories { edges { node { id } } } }';
    const first = /^petstore_requests_total\{operation="First",status="200"\}/;
    const second = /^petstore_requests_total\{operation="Second",status="200"\}/;
    const [firstBefore, secondBefore] = [await metric(first), await metric(second)];
    for (const operationName of ['First', 'Second', 'Second']) {
      const response = await fetch(`${inProcess.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: document, operationName }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(await metric(first)).toBe(firstBefore + 1);
    expect(await metric(second)).toBe(secondBefore + 2);
  });
});

describe('petstore_open_subscriptions of an in-process gateway', () => {
  const petStatusSubscription = /* GraphQL */ `
    subscription PetStatus { petStatusChanged { petId name categoryId status previousStatus } }
  `;

  it('counts open subscriptions in petstore_open_subscriptions while they are open', async () => {
    const url = `${inProcess.baseUrl}/graphql`;
    expect(await openSubscriptions(inProcess.baseUrl)).toBe(0);
    const sse = await subscribeSse(url, petStatusSubscription);
    expect(sse.status).toBe(200);
    const connection = await connectWebSocket(url);
    try {
      const ws = connection.subscribe(petStatusSubscription);
      await waitFor(async () => (await openSubscriptions(inProcess.baseUrl)) === 2, 'two open subscriptions');
      await sse.close();
      await ws.close();
      await waitFor(async () => (await openSubscriptions(inProcess.baseUrl)) === 0, 'no open subscription');
    } finally {
      await connection.dispose();
    }
  });
});

describe('label values', () => {
  it('are bounded: operation names (chosen by clients) and clients beyond the limit count as other', async () => {
    const metrics = createMetrics({ maxLabelValues: 2 });
    for (const operation of ['First', 'Second', 'Third', 'First', `Long${'x'.repeat(120)}`]) {
      metrics.requests.inc({ operation, status: 200 });
    }
    metrics.deprecatedUse.inc({ target: 'Query.getPetById', client: 'a' });
    metrics.deprecatedUse.inc({ target: 'Query.getPetById', client: 'b' });
    metrics.deprecatedUse.inc({ target: 'Query.getPetById', client: 'c' });
    const parsed = parseMetrics(await metrics.registry.metrics());
    expect(valueOf(parsed, 'petstore_requests_total', { operation: 'First', status: '200' })).toBe(2);
    expect(valueOf(parsed, 'petstore_requests_total', { operation: 'Second', status: '200' })).toBe(1);
    expect(valueOf(parsed, 'petstore_requests_total', { operation: 'other', status: '200' })).toBe(2);
    expect(valueOf(parsed, 'petstore_deprecated_use_total', { target: 'Query.getPetById', client: 'other' })).toBe(1);
  });
});
