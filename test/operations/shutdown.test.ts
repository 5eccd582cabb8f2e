import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { connectWebSocket, subscribeSse, untilSubscribed, waitFor } from '../support/subscriptions.js';

/**
 * Graceful shutdown of the real server process. The load is held open
 * honestly: the test locks the pets table, so every pets query the gateway
 * accepted waits on the database (a few on pool connections, the rest for
 * one) until the lock is released after the signal.
 */

const locks: Array<{ release(): Promise<void> }> = [];

afterAll(async () => {
  stopAll();
  await Promise.all(locks.map((lock) => lock.release().catch(() => undefined)));
  await cleanUp();
});

const POOL_SIZE = 4;
const GRACE_MS = 8_000;

/** A POST on a connection of its own (no keep-alive pool): its outcome is this request's alone. */
function postOnNewConnection(url: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function poolWaiting(gateway: GatewayProcess): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('petstore_db_pool_connections{state="waiting"}'));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/** Locks the pets table from outside the gateway until `release()`. */
async function lockPets(url: string) {
  const client = new pg.Client({ connectionString: url });
  // Dropped with the database at the end if a test failed while holding the lock.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query('COMMIT');
      await client.end();
    },
  };
}

const petsQuery = { query: 'query HeldPets { pets(first: 3) { edges { node { id name } } } }' };

describe.each([
  ['SIGTERM', 40],
  ['SIGINT', 12],
] as const)('on %s during a load of %i requests', (signal, load) => {
  it('every accepted request completes with 200, new connections are refused, subscriptions end properly, exit 0 within the grace period', {
    timeout: 90_000,
  }, async () => {
    const database = await migratedDatabase();
    const category = await database.prisma.category.create({ data: { name: `shutdown-${signal}` } });
    await database.prisma.pet.createMany({
      data: ['Ada', 'Bo', 'Cy'].map((name) => ({ name, categoryId: category.id })),
    });
    const gateway = await startProcess(database.url, {
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      LOG_LEVEL: 'info',
    });
    const port = Number(new URL(gateway.url).port);

    // Subscriptions open over both transports.
    const sse = await subscribeSse(gateway.url, 'subscription { petStatusChanged { petId } }');
    const socket = await connectWebSocket(gateway.url, { token: await testToken() });
    const ws = socket.subscribe('subscription { inventoryChanged { petId quantity } }');
    await untilSubscribed(gateway.baseUrl, 2);

    // The load: every request accepted and waiting on the database before the signal.
    const lock = await lockPets(database.url);
    locks.push(lock);
    const requests = Array.from({ length: load }, () => postOnNewConnection(gateway.url, petsQuery));
    const outcomes = Promise.allSettled(requests);
    await waitFor(async () => (await poolWaiting(gateway)) >= load - POOL_SIZE, `${load} requests inside the gateway`);

    const signalledAt = Date.now();
    const stopped = gateway.stop(signal, GRACE_MS + 10_000);

    // New connections are refused as soon as the signal is handled.
    await waitFor(() => refused(port), 'new connections to be refused', 5_000);
    // The subscriptions end properly: SSE with `event: complete` then the end of the stream;
    // WebSocket with `complete` for the operation, then close 1001 (going away).
    expect(await sse.ended).toEqual({ kind: 'complete' });
    expect(await ws.ended).toEqual({ kind: 'complete' });
    expect(await socket.closed).toMatchObject({ code: 1001 });

    // The database answers again: every request the gateway accepted completes.
    await lock.release();
    const settled = await outcomes;
    const failures = settled.filter((outcome) => outcome.status === 'rejected');
    expect(failures.map((failure) => String((failure as PromiseRejectedResult).reason))).toEqual([]);
    for (const outcome of settled) {
      const { status, body } = (outcome as PromiseFulfilledResult<{ status: number; body: string }>).value;
      expect(status, body).toBe(200);
      expect(JSON.parse(body).data.pets.edges).toHaveLength(3);
    }

    expect(await stopped).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS);
    expect(await refused(port)).toBe(true);
    const logLines = gateway
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; operation?: string; status?: number });
    expect(logLines.filter((line) => line.msg === 'request' && line.operation === 'HeldPets')).toHaveLength(load);
    expect(logLines.map((line) => line.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
  });
});

describe('when requests outlast the grace period', () => {
  it('they are cut when it ends, and the process exits (code 1) without waiting for them', { timeout: 60_000 }, async () => {
    const database = await migratedDatabase();
    const gateway = await startProcess(database.url, { SHUTDOWN_GRACE_MS: '1000', LOG_LEVEL: 'info' });
    const lock = await lockPets(database.url);
    try {
      const held = postOnNewConnection(gateway.url, petsQuery).then(
        () => 'answered',
        () => 'cut',
      );
      await waitFor(async () => {
        const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
        return /petstore_db_pool_connections\{state="idle"\} 0/.test(text) && /state="total"\} [1-9]/.test(text);
      }, 'the request to wait on the database');
      const signalledAt = Date.now();
      expect(await gateway.stop('SIGTERM', 15_000)).toEqual({ code: 1, signal: null });
      // The grace period, plus at most a second to let go of the database, plus the exit itself.
      expect(Date.now() - signalledAt).toBeLessThan(1_000 + 1_000 + 3_000);
      expect(await held).toBe('cut');
      expect(gateway.output()).toContain('grace period over');
    } finally {
      await lock.release();
    }
  });
});
