import pg from 'pg';
import { createPrismaClient } from '../../src/database/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy } from '../support/fault-proxy.js';
import { withoutCost } from '../support/http.js';
import { startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess } from '../support/processes.js';
import { type ReplicatedServers, replicationAvailable, startReplicatedServers, waitForReplay } from '../../harness/replication.js';

/**
 * Reads on a streaming replica, writes on the primary (DATABASE_REPLICA_URLS), with
 * read-your-writes through Write-Position / Read-After on any instance, and replicas that stop
 * or fall behind taken out of rotation and brought back. A primary and a replica are made for
 * this file with initdb, pg_basebackup and pg_ctl; every statement each server runs is logged,
 * so where a read ran is counted on the server itself.
 */

const haveServers = replicationAvailable('the read replica tests');
const CHECK_INTERVAL_MS = 150;
const MAX_LAG_MS = 1_200;

let servers: ReplicatedServers;
let first: GatewayProcess;
let second: GatewayProcess;
let token: string;
let petId: string;

beforeAll(async () => {
  if (!haveServers) return;
  // Two replicas: the gateways below read the first; one test spreads reads over both.
  servers = await startReplicatedServers({ replicas: 2 });
  const prisma = createPrismaClient({ url: servers.primaryUrl, poolSize: 1 });
  const category = await prisma.category.create({ data: { name: 'Replicated' } });
  petId = String((await prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } })).id);
  await prisma.$disconnect();
  await waitForReplay(servers.onPrimary, servers.onReplica);
  await waitForReplay(servers.onPrimary, (work) => onSecondReplica(work));
  const settings = {
    DATABASE_REPLICA_URLS: servers.replicaUrl,
    DATABASE_REPLICA_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
  };
  // The second keeps answers in its response cache (whose misses read the primary).
  [first, second] = await Promise.all([
    startProcess(servers.primaryUrl, settings),
    startProcess(servers.primaryUrl, { ...settings, RESPONSE_CACHE_TTL_MS: '60000' }),
  ]);
  token = await testToken();
  await Promise.all([inRotation(first), inRotation(second)]);
}, 90_000);

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  await servers?.stop();
});

interface Answer {
  status: number;
  headers: Headers;
  body: {
    data?: { pet?: { name: string } | null; [field: string]: unknown } | null;
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
    extensions?: Record<string, unknown>;
    [field: string]: unknown;
  };
}

async function graphql(gateway: GatewayProcess, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  // extensions.cost is checked and set aside, as every test client does (test/support/http.ts).
  return { status: response.status, headers: response.headers, body: withoutCost(await response.json()).body };
}

async function rest(gateway: GatewayProcess, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}${path}`, { headers: { accept: 'application/json', ...headers } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

type Readiness = { status: string; replicas: Array<{ name: string; state: string; lagSeconds: number | null }>; degraded?: { replicas?: string[] } };
const readiness = async (gateway: GatewayProcess) => (await (await fetch(`${gateway.baseUrl}/readyz`)).json()) as Readiness;

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function onSecondReplica<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: servers.replicaUrls[1] });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const stateOf = async (gateway: GatewayProcess) => (await readiness(gateway)).replicas[0]?.state;
const inRotation = (gateway: GatewayProcess) => until('the replica in rotation', () => stateOf(gateway), (state) => state === 'in rotation');

const PET = 'query Pet($id: ID!) { pet(id: $id) { name } }';
const RENAME = 'mutation Rename($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }';
// Statements reading or writing the pets table, as each server logs them.
const PET_READS = /statement|execute/;
const readsOfPets = (server: 'primary' | 'replica' | 'replica2') => servers.statementsOn(server, new RegExp(`(${PET_READS.source}).*SELECT.*FROM "public"\\."pets"`));

async function rename(gateway: GatewayProcess, name: string) {
  const answer = await graphql(gateway, RENAME, { id: petId, name });
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.data).toEqual({ updatePet: { name } });
  return answer;
}

describe.skipIf(!haveServers)('reads on a streaming replica', () => {
  it('runs GraphQL queries and REST reads on the replica and writes on the primary, as each server counts them', async () => {
    const before = { primary: await readsOfPets('primary'), replica: await readsOfPets('replica') };
    for (let i = 0; i < 5; i++) {
      expect((await graphql(first, PET, { id: petId })).body).toEqual({ data: { pet: { name: 'Rex' } } });
      expect((await rest(second, `/pets/${petId}`)).body).toMatchObject({ id: Number(petId), name: 'Rex' });
    }
    const after = { primary: await readsOfPets('primary'), replica: await readsOfPets('replica') };
    expect(after.replica - before.replica).toBeGreaterThanOrEqual(10);
    expect(after.primary - before.primary).toBe(0);

    // A write cannot run on a replica at all (it is read-only), so its success shows where it ran;
    // the primary's log shows it too.
    // createCategory is one INSERT of the gateway's own (src/domain/catalog.ts).
    const insertsBefore = await servers.statementsOn('primary', /INSERT INTO categories /);
    const created = await graphql(first, 'mutation { createCategory(input: { name: "Written" }) { name } }');
    expect(created.body.data).toEqual({ createCategory: { name: 'Written' } });
    expect(await servers.statementsOn('primary', /INSERT INTO categories /)).toBe(insertsBefore + 1);
    expect(await servers.statementsOn('replica', /INSERT INTO/)).toBe(0);
  });

  it("gives the writer its write position and, with it, its own write on any instance while the replica's replay is paused", async () => {
    await servers.onReplica((client) => client.query('SELECT pg_wal_replay_pause()'));
    try {
      const written = await rename(first, 'Rex the Second');
      const position = written.headers.get('write-position');
      expect(position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      expect(written.body.extensions).toEqual({ writePosition: position });

      // The writer, on the other instance too, over GraphQL and REST: the primary answers.
      for (const gateway of [first, second]) {
        const read = await graphql(gateway, PET, { id: petId }, { 'read-after': position! });
        expect(read.body).toEqual({ data: { pet: { name: 'Rex the Second' } } });
        expect((await rest(gateway, `/pets/${petId}`, { 'read-after': position! })).body).toMatchObject({ name: 'Rex the Second' });
      }
      // Over WebSocket-style clients the position travels as a request extension.
      const byExtension = await fetch(first.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: PET, variables: { id: petId }, extensions: { readAfter: position } }),
      });
      expect(withoutCost(await byExtension.json()).body).toEqual({ data: { pet: { name: 'Rex the Second' } } });

      // Everybody else still reads the replica, which has not replayed the write yet.
      const replicaReads = await readsOfPets('replica');
      expect((await graphql(first, PET, { id: petId })).body).toEqual({ data: { pet: { name: 'Rex' } } });
      expect((await rest(second, `/pets/${petId}`)).body).toMatchObject({ name: 'Rex' });
      expect(await readsOfPets('replica')).toBe(replicaReads + 2);

      // Where the response cache is on, the queries it may keep read the primary.
      const anonymous = await fetch(second.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: PET, variables: { id: petId } }),
      });
      expect(withoutCost(await anonymous.json()).body).toEqual({ data: { pet: { name: 'Rex the Second' } } });
      expect(await readsOfPets('replica')).toBe(replicaReads + 2);
    } finally {
      await servers.onReplica((client) => client.query('SELECT pg_wal_replay_resume()'));
    }
    // Once the replica has replayed it, the writer's reads go back to the replica.
    await waitForReplay(servers.onPrimary, servers.onReplica);
    const position = (await rename(second, 'Rex the Third')).headers.get('write-position')!;
    await waitForReplay(servers.onPrimary, servers.onReplica);
    await new Promise((resolve) => setTimeout(resolve, CHECK_INTERVAL_MS * 3));
    const replicaReads = await readsOfPets('replica');
    expect((await graphql(first, PET, { id: petId }, { 'read-after': position })).body).toEqual({ data: { pet: { name: 'Rex the Third' } } });
    expect(await readsOfPets('replica')).toBe(replicaReads + 1);
  });

  it('gives the write position after a planned write too (its plan answers, on the primary)', async () => {
    const prisma = createPrismaClient({ url: servers.primaryUrl, poolSize: 1 });
    await prisma.inventoryItem.create({ data: { petId: BigInt(petId), quantity: 10, status: 'available' } });
    await prisma.$disconnect();
    const PLACE = 'mutation Place($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { quantity complete } }';
    // Each answered by its plan, with the position as header and extension.
    const planned = async () => Number(/^petstore_graphql_executions_total\{engine="plan"\} (\d+)/m.exec(await (await fetch(`${first.baseUrl}/metrics`)).text())?.[1] ?? 0);
    for (let time = 0; time < 2; time++) {
      const before = await planned();
      const placed = await graphql(first, PLACE, { p: petId });
      expect(await planned()).toBe(before + 1);
      const position = placed.headers.get('write-position');
      expect(position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      expect(placed.body).toEqual({ data: { placeOrder: { quantity: 1, complete: false } }, extensions: { writePosition: position } });
      // With it, the writer reads its own write at once, wherever the replica stands.
      const stock = await graphql(first, 'query Stock($id: ID!) { pet(id: $id) { inventory { quantity } } }', { id: petId }, { 'read-after': position! });
      expect(stock.body).toEqual({ data: { pet: { inventory: { quantity: 9 - time } } } });
    }
  });

  it('refuses a malformed Read-After in the documented error shape, GraphQL and REST', async () => {
    const read = await graphql(first, PET, { id: petId }, { 'read-after': 'yesterday' });
    expect(read.status).toBe(400);
    expect(read.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(read.body.errors?.[0]?.message).toMatch(/Read-After must be a write position/);
    const legacy = await rest(first, `/pets/${petId}`, { 'read-after': '1/2/3' });
    expect(legacy.status).toBe(400);
    expect(legacy.body).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    const byExtension = await fetch(first.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: PET, variables: { id: petId }, extensions: { readAfter: 42 } }),
    });
    const body = (await byExtension.json()) as Answer['body'];
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(body.data ?? null).toBeNull();
  });

  it('takes a lagging replica out of rotation (reads go to the primary, /readyz and /metrics say so) and back once it catches up', async () => {
    await servers.onReplica((client) => client.query('SELECT pg_wal_replay_pause()'));
    try {
      await rename(first, 'Rex behind');
      const lagging = await until('the replica lagging', () => readiness(first), (ready) => ready.replicas[0]?.state === 'lagging');
      expect(lagging.status).toBe('degraded');
      expect(lagging.replicas[0]!.lagSeconds).toBeGreaterThan(MAX_LAG_MS / 1000);
      expect(lagging.degraded?.replicas?.[0]).toMatch(/is lagging: its reads go to the primary/);
      const metrics = await (await fetch(`${first.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/petstore_db_replica_in_rotation\{replica="127\.0\.0\.1:\d+\/petstore"\} 0/);
      expect(metrics).toMatch(/petstore_db_replica_lag_seconds\{replica="127\.0\.0\.1:\d+\/petstore"\} [1-9]/);
      // A reader without a position now gets the primary's state, not the replica's old one.
      const replicaReads = await readsOfPets('replica');
      expect((await graphql(first, PET, { id: petId })).body).toEqual({ data: { pet: { name: 'Rex behind' } } });
      expect(await readsOfPets('replica')).toBe(replicaReads);
    } finally {
      await servers.onReplica((client) => client.query('SELECT pg_wal_replay_resume()'));
    }
    await inRotation(first);
    expect((await readiness(first)).status).toBe('ready');
    const metrics = await (await fetch(`${first.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/petstore_db_replica_in_rotation\{replica="[^"]+"\} 1/);
    expect(metrics).toMatch(/petstore_db_reads_total\{server="replica"\} [1-9]/);
    expect(first.output()).toMatch(/read replica out of rotation: its reads go to the primary/);
  });

  it('takes a stopped replica out of rotation with every read still answered, and back once it is up', async () => {
    await servers.stopReplica();
    try {
      const statuses: number[] = [];
      const names = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const read = await graphql(first, PET, { id: petId });
        statuses.push(read.status);
        if (read.body.data?.pet) names.add(read.body.data.pet.name);
        const legacy = await rest(second, `/pets/${petId}`);
        statuses.push(legacy.status);
      }
      expect(new Set(statuses)).toEqual(new Set([200]));
      expect(names).toEqual(new Set(['Rex behind']));
      const ready = await until('the replica unreachable', () => readiness(first), (r) => r.replicas[0]?.state === 'unreachable');
      expect(ready.status).toBe('degraded');
    } finally {
      await servers.startReplica();
    }
    await Promise.all([inRotation(first), inRotation(second)]);
    const replicaReads = await readsOfPets('replica');
    expect((await graphql(first, PET, { id: petId })).status).toBe(200);
    expect(await readsOfPets('replica')).toBe(replicaReads + 1);
  });

  it('spreads reads over every replica in rotation, and over the others while one is stopped', async () => {
    const gateway = await startProcess(servers.primaryUrl, {
      DATABASE_REPLICA_URLS: servers.replicaUrls.join(','),
      DATABASE_REPLICA_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
    });
    const count = async () => ({
      primary: await readsOfPets('primary'),
      first: await readsOfPets('replica'),
      second: await readsOfPets('replica2'),
    });
    try {
      await until('both replicas in rotation', () => readiness(gateway), (ready) => ready.replicas.every((replica) => replica.state === 'in rotation'));
      expect((await readiness(gateway)).replicas).toHaveLength(2);
      const before = await count();
      for (let i = 0; i < 20; i++) expect((await rest(gateway, `/pets/${petId}`)).status).toBe(200);
      const after = await count();
      expect(after.primary - before.primary).toBe(0);
      expect(after.first - before.first).toBe(10);
      expect(after.second - before.second).toBe(10);

      await servers.stopReplica(1);
      try {
        await until('the second replica out', () => readiness(gateway), (ready) => ready.replicas[1]?.state === 'unreachable');
        const stopped = await count();
        for (let i = 0; i < 10; i++) expect((await rest(gateway, `/pets/${petId}`)).status).toBe(200);
        expect((await count()).first - stopped.first).toBe(10);
      } finally {
        await servers.startReplica(1);
      }
      await until('the second replica back', () => readiness(gateway), (ready) => ready.replicas[1]?.state === 'in rotation');
    } finally {
      await gateway.stop();
    }
  });

  it('answers reads on the primary when the replica refuses connections between two checks', async () => {
    const replica = new URL(servers.replicaUrl);
    const proxy = await startFaultProxy({ host: replica.hostname, port: Number(replica.port) });
    // Checked once a minute: only the reads themselves can find the replica gone.
    const gateway = await startProcess(servers.primaryUrl, {
      DATABASE_REPLICA_URLS: proxy.urlFor(servers.replicaUrl),
      DATABASE_REPLICA_CHECK_INTERVAL_MS: '60000',
    });
    try {
      await inRotation(gateway);
      proxy.set('refuse');
      // More reads at once than the pool holds open (each a statement of its own, unlike lookups by id,
      // which concurrent requests share): most need a new connection, which is refused.
      const answers = await Promise.all(Array.from({ length: 30 }, () => graphql(gateway, '{ pets(first: 5) { totalCount } }')));
      expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
      expect(answers.map((answer) => answer.body)).toEqual(Array(30).fill({ data: { pets: { totalCount: 1 } } }));
      expect((await readiness(gateway)).replicas[0]?.state).toBe('unreachable');
    } finally {
      await gateway.stop();
      await proxy.close();
    }
  });
});
