import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withAdmin } from '../support/database.js';
import { withoutCost } from '../support/http.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { type GatewayProcess, startGateway, stopAll } from '../support/processes.js';

/**
 * The gateway as users run it, left idle past every idle timeout in the stack
 * and asked again: the pool's (DATABASE_IDLE_TIMEOUT_MS), HTTP keep-alive
 * (HTTP_KEEP_ALIVE_TIMEOUT_MS), and the database's own (PostgreSQL's
 * idle_session_timeout; the embedded server's EMBEDDED_DATABASE_IDLE_TIMEOUT_MS).
 * Each is made short by configuration rather than waited out. The same
 * documents are asked before and after, so statements prepared on a closed
 * connection are met again: on the embedded database that used to answer 500
 * (42P05) from the first pause on.
 */

const folders: string[] = [];
afterAll(async () => {
  stopAll();
  await cleanUp();
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

const SHORT = { pool: 300, keepAlive: 200, database: 500 };
// Longer than every one of them, with room for a timer that fires late on a busy machine.
const IDLE_MS = 1_500;

/** One HTTP connection, kept alive between requests, as a browser or a proxy keeps it. */
function keepAliveClient(base: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<Socket>();
  const closed = new Set<Socket>();
  const send = (method: string, target: string, body?: unknown) =>
    new Promise<{ status: number; json: { data?: unknown; errors?: unknown } & Record<string, unknown> }>((resolve, reject) => {
      const request = http.request(`${base}${target}`, {
        agent,
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      });
      request.on('socket', (socket) => {
        if (!sockets.has(socket)) {
          sockets.add(socket);
          socket.once('close', () => closed.add(socket));
        }
      });
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) }));
      });
      request.on('error', reject);
      request.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return { send, sockets, closed, close: () => agent.destroy() };
}

const documents = [
  { query: '{ pets(first: 5) { totalCount nodes { id name status category { name } inventory { quantity } } } }' },
  { query: 'query ($id: ID!) { pet(id: $id) { id name } }', variables: { id: '1' } },
  { query: '{ categories(first: 3) { nodes { name pets(first: 2) { nodes { name } } } } }' },
];

async function askEverything(client: ReturnType<typeof keepAliveClient>, petId: string) {
  const answers = [];
  for (const document of documents) {
    const variables = document.variables ? { id: petId } : undefined;
    const answer = await client.send('POST', '/graphql', { ...document, variables });
    // The budget left moves between rounds; what is compared is the answer (test/support/http.ts).
    answers.push({ ...answer, json: withoutCost(answer.json).body });
  }
  answers.push(await client.send('GET', `/pets/${petId}`));
  return answers;
}

async function poolConnections(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('petstore_db_pool_connections{state="total"}'));
  return Number(line?.split(' ')[1]);
}

async function idleAndAskAgain(gateway: GatewayProcess, petId: string, { poolClosesIdle }: { poolClosesIdle: boolean }) {
  const base = gateway.baseUrl;
  const client = keepAliveClient(base);
  try {
    const before = await askEverything(client, petId);
    for (const answer of before) expect(answer).toMatchObject({ status: 200 });
    expect(before.every((answer) => answer.json.errors === undefined)).toBe(true);
    const [firstSocket] = client.sockets;

    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    // Past the keep-alive timeout the gateway closed the client's connection…
    expect(client.closed.has(firstSocket!)).toBe(true);
    // …and past the pool's (or the database's own) idle timeout, every database connection is gone.
    if (poolClosesIdle) expect(await poolConnections(base)).toBe(0);

    for (let round = 0; round < 3; round++) {
      const after = await askEverything(client, petId);
      expect(after.map((answer) => answer.status)).toEqual(before.map((answer) => answer.status));
      expect(after.map((answer) => answer.json)).toEqual(before.map((answer) => answer.json));
      await new Promise((resolve) => setTimeout(resolve, round === 0 ? IDLE_MS : 0));
    }
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready' });
  } finally {
    client.close();
  }
}

describe('idle past every timeout, then asked again', () => {
  it('on the embedded default (npm start with no DATABASE_URL), the pool closing idle connections', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-idle-'));
    folders.push(dataDir);
    const gateway = await startGateway({
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_IDLE_TIMEOUT_MS: String(SHORT.pool),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(SHORT.keepAlive),
      EMBEDDED_DATABASE_IDLE_TIMEOUT_MS: String(SHORT.database),
    });
    await idleAndAskAgain(gateway, '1', { poolClosesIdle: true });
    expect(gateway.output()).not.toMatch(/"level":50/);
    expect((await gateway.stop()).code).toBe(0);
  });

  it('on the embedded default, the embedded database closing connections the pool keeps', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-idle-'));
    folders.push(dataDir);
    const gateway = await startGateway({
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_IDLE_TIMEOUT_MS: '0',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(SHORT.keepAlive),
      EMBEDDED_DATABASE_IDLE_TIMEOUT_MS: String(SHORT.database),
    });
    await idleAndAskAgain(gateway, '1', { poolClosesIdle: true });
    expect(gateway.output()).not.toMatch(/"level":50/);
    expect((await gateway.stop()).code).toBe(0);
  });

  it('on a PostgreSQL server, the pool closing idle connections', { timeout: 120_000 }, async () => {
    const database = await migratedDatabase();
    const { pets } = await arrangePets(database.prisma, 3);
    const gateway = await startProcess(database.url, {
      DATABASE_IDLE_TIMEOUT_MS: String(SHORT.pool),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(SHORT.keepAlive),
    });
    await idleAndAskAgain(gateway, pets[0]!.id, { poolClosesIdle: true });
    expect(gateway.output()).not.toMatch(/"level":50/);
    expect((await gateway.stop()).code).toBe(0);
  });

  it('on a PostgreSQL server that ends idle sessions itself (idle_session_timeout)', { timeout: 120_000 }, async () => {
    const database = await migratedDatabase();
    const { pets } = await arrangePets(database.prisma, 3);
    await withAdmin((admin) => admin.query(`ALTER DATABASE "${database.name}" SET idle_session_timeout = ${SHORT.database}`));
    const gateway = await startProcess(database.url, {
      DATABASE_IDLE_TIMEOUT_MS: '0',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(SHORT.keepAlive),
    });
    await idleAndAskAgain(gateway, pets[0]!.id, { poolClosesIdle: true });
    expect(gateway.output()).not.toMatch(/"level":50/);
    expect((await gateway.stop()).code).toBe(0);
  });
});
