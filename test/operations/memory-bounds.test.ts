import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChurn } from '../../harness/churn.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';

/**
 * Every cache that grows with what clients send stays within its bounds, each
 * a setting, and says so in /metrics (petstore_cache_*): parsed documents (by
 * count and by bytes), query plans, cost estimates (dropped with their
 * documents), documents
 * registered by automatic persisted queries, verified tokens, the response
 * cache and its write stamps. The real process, with small bounds, under
 * document churn: distinct documents, each sent three times.
 */

let gateway: GatewayProcess;
let base: string;
/** The same with the response cache on, whose hits run nothing. */
let cachedBase: string;
let databaseUrl: string;

const BOUNDS = {
  GRAPHQL_DOCUMENT_CACHE_MAX_ENTRIES: '60',
  GRAPHQL_DOCUMENT_CACHE_MAX_BYTES: '400000',
  PERSISTED_QUERIES_MAX_ENTRIES: '10',
  TOKEN_CACHE_MAX_ENTRIES: '5',
  PRISMA_QUERY_PLAN_CACHE_MAX_ENTRIES: '50',
  GRAPHQL_PLAN_CACHE_MAX_ENTRIES: '40',
  COST_ESTIMATES_MAX_ENTRIES: '30',
};

// Limits the churn cannot reach: the requests per minute, and a cost budget it cannot spend.
const UNLIMITED = { RATE_LIMIT_REQUESTS: '1000000', COST_BUDGET_CAPACITY: '100000000', COST_BUDGET_REFILL_PER_SECOND: '1000000' };

beforeAll(async () => {
  const database = await migratedDatabase();
  databaseUrl = database.url;
  for (let i = 0; i < 4; i++) await arrangePets(database.prisma, 3, 0, null, 2, 8);
  gateway = await startProcess(database.url, { ...BOUNDS, TRUSTED_DOCUMENTS: 'allow', ...UNLIMITED });
  base = gateway.baseUrl;
  const cached = await startProcess(database.url, {
    RESPONSE_CACHE_TTL_MS: '60000',
    RESPONSE_CACHE_MAX_ENTRIES: '25',
    ...UNLIMITED,
  });
  cachedBase = cached.baseUrl;
}, 60_000);

afterAll(async () => {
  stopAll();
  await cleanUp();
});

type Sample = Record<string, number>;

/** Every petstore_cache_* and execution counter in /metrics, as `metric{labels}` → value. */
async function metrics(of = base): Promise<Sample> {
  const text = await (await fetch(`${of}/metrics`)).text();
  const sample: Sample = {};
  for (const line of text.split('\n')) {
    const match = /^(petstore_(?:cache_\w+|graphql_executions_total)(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) sample[match[1]!] = Number(match[2]);
  }
  return sample;
}

const of = (sample: Sample, metric: string, cache: string, reason?: string) =>
  sample[`petstore_cache_${metric}{cache="${cache}"${reason ? `,reason="${reason}"` : ''}}`] ?? 0;
const executions = (sample: Sample, engine: string) => sample[`petstore_graphql_executions_total{engine="${engine}"}`] ?? 0;

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> } };
}

describe('per-document memory under churn', () => {
  it('keeps parsed documents and their plans within their counts, and counts what it let go', async () => {
    const before = await metrics();
    const churn = await runChurn({ url: `${base}/graphql`, start: 0, documents: 300, repeats: 3, concurrency: 8 });
    expect(churn).toMatchObject({ sent: 900, errors: 0 });
    const after = await metrics();
    expect(of(after, 'max_entries', 'graphql_documents')).toBe(60);
    expect(of(after, 'entries', 'graphql_documents')).toBeLessThanOrEqual(60);
    expect(of(after, 'bytes', 'graphql_documents')).toBeLessThanOrEqual(400_000);
    expect(of(after, 'evictions_total', 'graphql_documents', 'evict') - of(before, 'evictions_total', 'graphql_documents', 'evict')).toBeGreaterThanOrEqual(240);
    // Query plans are remembered from a document's first run, and kept within their own bound.
    expect(of(after, 'max_entries', 'graphql_plans')).toBe(40);
    expect(of(after, 'entries', 'graphql_plans')).toBeLessThanOrEqual(40);
    expect(of(after, 'evictions_total', 'graphql_plans', 'evict') - of(before, 'evictions_total', 'graphql_plans', 'evict')).toBeGreaterThanOrEqual(200);
    // Cost estimates, one per document and variable shape, within theirs.
    expect(of(after, 'max_entries', 'graphql_costs')).toBe(30);
    expect(of(after, 'entries', 'graphql_costs')).toBeLessThanOrEqual(30);
    expect(of(after, 'evictions_total', 'graphql_costs', 'evict') - of(before, 'evictions_total', 'graphql_costs', 'evict')).toBeGreaterThanOrEqual(200);
    // Every request was executed once, by its plan or by graphql-js.
    const planned = executions(after, 'plan') - executions(before, 'plan');
    expect(planned).toBeGreaterThan(0);
    expect(planned + executions(after, 'graphql-js') - executions(before, 'graphql-js')).toBe(900);
  });

  it('drops the cost estimates of a document once no cache holds it, before their own bound is reached', async () => {
    // A bound far above the churn: what keeps the estimates down is their documents going.
    const own = await startProcess(databaseUrl, {
      GRAPHQL_DOCUMENT_CACHE_MAX_ENTRIES: '60',
      GRAPHQL_PLAN_CACHE_MAX_ENTRIES: '40',
      COST_ESTIMATES_MAX_ENTRIES: '10000',
      ...UNLIMITED,
    });
    const churn = await runChurn({ url: `${own.baseUrl}/graphql`, start: 20_000, documents: 300, repeats: 2, concurrency: 8 });
    expect(churn).toMatchObject({ sent: 600, errors: 0 });
    const after = await metrics(own.baseUrl);
    // One estimate per document (each is sent with the same variables): at most those the document cache and the plans hold.
    expect(of(after, 'entries', 'graphql_costs')).toBeGreaterThan(0);
    expect(of(after, 'entries', 'graphql_costs')).toBeLessThanOrEqual(100);
    expect(of(after, 'evictions_total', 'graphql_costs', 'evict')).toBe(0);
  });

  it('keeps big documents within the bytes bound, fewer than its count allows', async () => {
    // Each about 6 KB of text: some 480 KB of syntax tree, so the 400 KB bound holds fewer than 60.
    const big = (n: number) => `{ ${Array.from({ length: 150 }, (_, i) => `a${n}_${i}: __typename`).join(' ')} }`;
    for (let n = 0; n < 30; n++) expect((await post({ query: big(n) })).status).toBe(200);
    const after = await metrics();
    expect(of(after, 'bytes', 'graphql_documents')).toBeLessThanOrEqual(400_000);
    expect(of(after, 'entries', 'graphql_documents')).toBeLessThan(30);
  });

  it('keeps documents registered by automatic persisted queries within their bound', async () => {
    for (let n = 0; n < 25; n++) {
      const query = `{ r${n}: __typename }`;
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const answer = await post({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } });
      expect(answer.status).toBe(200);
    }
    const after = await metrics();
    expect(of(after, 'entries', 'persisted_queries')).toBe(10);
    expect(of(after, 'evictions_total', 'persisted_queries', 'evict')).toBe(15);
    // The newest is still known by its hash alone, the oldest is not.
    const newest = createHash('sha256').update('{ r24: __typename }').digest('hex');
    const oldest = createHash('sha256').update('{ r0: __typename }').digest('hex');
    expect((await post({ extensions: { persistedQuery: { version: 1, sha256Hash: newest } } })).body.errors).toBeUndefined();
    expect((await post({ extensions: { persistedQuery: { version: 1, sha256Hash: oldest } } })).body.errors?.[0]?.extensions?.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
  });

  it('remembers at most its bound of verified tokens', async () => {
    for (let n = 0; n < 12; n++) {
      const token = await testToken(['orders:read'], `subject-${n}`);
      expect((await post({ query: '{ orders(first: 1) { totalCount } }' }, { authorization: `Bearer ${token}` })).status).toBe(200);
    }
    const after = await metrics();
    expect(of(after, 'entries', 'verified_tokens')).toBe(5);
    expect(of(after, 'evictions_total', 'verified_tokens', 'evict')).toBeGreaterThanOrEqual(7);
  });

  it('reports the bounds it cannot count (Prisma’s query plans), the statements it named and the texts it keeps', async () => {
    expect((await post({ query: '{ orders(first: 2) { edges { node { id } } } }' }, { authorization: `Bearer ${await testToken(['orders:read'])}` })).status).toBe(200);
    const after = await metrics();
    expect(of(after, 'max_entries', 'statement_templates')).toBe(1_000);
    expect(of(after, 'entries', 'statement_templates')).toBeGreaterThan(0);
    expect(of(after, 'max_entries', 'prisma_query_plans')).toBe(50);
    expect(of(after, 'max_entries', 'prepared_statement_names')).toBe(500);
    expect(of(after, 'entries', 'prepared_statement_names')).toBeGreaterThan(0);
    expect(of(after, 'entries', 'prepared_statement_names')).toBeLessThanOrEqual(500);
  });

  it('keeps the response cache within its bound', async () => {
    await runChurn({ url: `${cachedBase}/graphql`, start: 20_000, documents: 60, repeats: 2, concurrency: 4 });
    const after = await metrics(cachedBase);
    expect(of(after, 'max_entries', 'response_cache')).toBe(25);
    expect(of(after, 'entries', 'response_cache')).toBeLessThanOrEqual(25);
    expect(of(after, 'evictions_total', 'response_cache', 'evict')).toBeGreaterThanOrEqual(35);
    expect(of(after, 'max_entries', 'response_cache_stamps')).toBe(100_000);
  });
});
