import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';

/**
 * Far more concurrent reads than the pool can serve, each held up by a lock
 * on the table: requests beyond the waiting bound are refused at once (503
 * UNAVAILABLE with Retry-After), every other one is answered within the time
 * limit, and once the lock goes a light request is served at once, not after
 * the queue of work whose clients were already answered.
 */

const REQUEST_TIMEOUT_MS = 3_000;
const LOAD = 40;
let gateway: GatewayProcess;
let base: string;
let databaseUrl: string;

beforeAll(async () => {
  const database = await migratedDatabase();
  databaseUrl = database.url;
  await arrangePets(database.prisma, 1, 1);
  gateway = await startProcess(database.url, {
    DATABASE_POOL_SIZE: '2',
    DATABASE_MAX_WAITING: '6',
    DATABASE_CONNECT_TIMEOUT_MS: '1500',
    DATABASE_STATEMENT_TIMEOUT_MS: '2000',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
  base = gateway.baseUrl;
}, 60_000);

afterAll(async () => {
  await gateway?.stop().catch(() => undefined);
  stopAll();
  await cleanUp();
});

async function read(query: string) {
  const startedAt = performance.now();
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  return {
    status: response.status,
    code: body.errors?.[0]?.extensions?.code ?? 'OK',
    retryAfter: response.headers.get('retry-after'),
    tookMs: performance.now() - startedAt,
  };
}

describe('overload', () => {
  it('sheds what cannot be served, answers the rest within the limit, and recovers at once', { timeout: 60_000 }, async () => {
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
    let answers: Awaited<ReturnType<typeof read>>[];
    try {
      answers = await Promise.all(
        Array.from({ length: LOAD }, () => read('{ pets(first: 50) { totalCount edges { node { id name } } } }')),
      );
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    for (const answer of answers) {
      // Refused (UNAVAILABLE), or stopped at the statement or request time limit (TIMEOUT): never a hang.
      expect(['UNAVAILABLE', 'TIMEOUT'], JSON.stringify(answer)).toContain(answer.code);
      expect(answer.tookMs, JSON.stringify(answer)).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
    }
    const shed = answers.filter((answer) => answer.code === 'UNAVAILABLE');
    // Beyond two connections and six waiting, the rest is refused straight away, telling when to retry.
    expect(shed.length).toBeGreaterThanOrEqual(LOAD - 2 - 6 - 4);
    for (const answer of shed) expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Math.min(...shed.map((answer) => answer.tookMs))).toBeLessThan(1_000);

    // The next light request does not wait behind work whose clients were already answered.
    const light = await read('{ categories(first: 1) { totalCount } }');
    expect(light).toMatchObject({ status: 200, code: 'OK' });
    expect(light.tookMs).toBeLessThan(2_000);
  });
});
