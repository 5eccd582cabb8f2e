import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { waitFor } from '../support/subscriptions.js';

/**
 * The real process with a TCP proxy between it and PostgreSQL that refuses,
 * freezes (accepts and stays silent) and cuts connections. Whatever the fault,
 * every request is answered within its time limit (plus a margin) with 503
 * and the documented Error shape, /readyz says not ready, the outage is logged
 * once (not once per request), and the same process recovers by itself once
 * the network heals.
 */

const REQUEST_TIMEOUT_MS = 4_000;
const MARGIN_MS = 2_500;
let proxy: FaultProxy;
let gateway: GatewayProcess;
let base: string;
let petId: string;

beforeAll(async () => {
  const database = await migratedDatabase();
  petId = (await arrangePets(database.prisma, 3)).pets[0]!.id;
  proxy = await startFaultProxy({ host: '127.0.0.1', port: Number(new URL(database.url).port || 5432) });
  gateway = await startProcess(proxy.urlFor(database.url), {
    LOG_LEVEL: 'info',
    DATABASE_POOL_SIZE: '3',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    DATABASE_STATEMENT_TIMEOUT_MS: '1000',
    DATABASE_QUERY_TIMEOUT_MS: '1500',
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
  });
  base = gateway.baseUrl;
}, 60_000);

afterAll(async () => {
  await gateway?.stop().catch(() => undefined);
  await proxy?.close();
  stopAll();
  await cleanUp();
});

const petsQuery = JSON.stringify({ query: '{ pets(first: 2) { edges { node { id name } } } }' });

/** A GraphQL read and a REST read, timed: status, code, Retry-After and how long the answer took. */
async function reads() {
  const timed = async (send: () => Promise<Response>) => {
    const startedAt = performance.now();
    const response = await send();
    const body = (await response.json()) as { code?: string; errors?: Array<{ extensions?: { code?: string } }> };
    return {
      status: response.status,
      code: body.code ?? body.errors?.[0]?.extensions?.code,
      retryAfter: response.headers.get('retry-after'),
      tookMs: performance.now() - startedAt,
    };
  };
  return Promise.all([
    timed(() =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: petsQuery,
      }),
    ),
    timed(() => fetch(`${base}/pets/${petId}`)),
  ]);
}

const healthy = async () => (await reads()).every((answer) => answer.status === 200);
const logLines = () =>
  gateway
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; level: number; service?: string });

async function expectUnavailable() {
  // Several rounds at once: more requests than the pool has connections.
  const rounds = await Promise.all(Array.from({ length: 4 }, () => reads()));
  for (const answer of rounds.flat()) {
    expect(answer.status, JSON.stringify(answer)).toBe(503);
    expect(answer.code, JSON.stringify(answer)).toBe('UNAVAILABLE');
    expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(answer.tookMs).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
  }
  const readiness = await fetch(`${base}/readyz`);
  expect(readiness.status).toBe(503);
}

async function expectRecovered() {
  await waitFor(healthy, 'reads to succeed again after the fault healed', 20_000);
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, '/readyz to say ready again', 10_000);
}

describe('PostgreSQL behind a faulty network', () => {
  it('a database that goes silent: 503 UNAVAILABLE within the time limit, and recovery once it answers', { timeout: 90_000 }, async () => {
    expect(await healthy()).toBe(true);
    proxy.set('freeze');
    await expectUnavailable();
    proxy.set('pass');
    await expectRecovered();
  });

  it('a database that refuses connections and cuts the open ones: the same, and the outage logged once', { timeout: 90_000 }, async () => {
    const before = logLines().filter((line) => line.msg.startsWith('database unavailable')).length;
    proxy.set('refuse');
    proxy.cut();
    await expectUnavailable();
    await expectUnavailable();
    proxy.set('pass');
    await expectRecovered();
    const lines = logLines();
    expect(lines.filter((line) => line.msg.startsWith('database unavailable')).length - before).toBe(1);
    expect(lines.filter((line) => line.msg === 'database available again').length).toBeGreaterThanOrEqual(2);
    // No stack per failed request: nothing logged as an unexpected error.
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
