import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/tokens.js';
import { arrangePets, cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { type GatewayProcess, stopAll } from '../support/processes.js';
import { connectWebSocket, subscribeSse, untilSubscribed, waitFor } from '../support/subscriptions.js';

/**
 * The request log of the real server process at LOG_LEVEL=info: one JSON
 * line per request with its id (taken from X-Request-Id or made, and
 * returned), operation, duration and status; never a token, a header or a body.
 */

let gateway: GatewayProcess;
let baseUrl: string;
let petId: string;
let token: string;
let database: Awaited<ReturnType<typeof migratedDatabase>>;

beforeAll(async () => {
  database = await migratedDatabase();
  petId = (await arrangePets(database.prisma, 1)).pets[0]!.id;
  gateway = await startProcess(database.url, { LOG_LEVEL: 'info', LEGACY_SUNSET_DATE: '2099-12-31' });
  baseUrl = gateway.baseUrl;
  token = await testToken(undefined, 'log-reader');
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  stopAll();
  await cleanUp();
});

interface LogLine {
  level: number;
  time: number;
  msg: string;
  requestId?: string;
  method?: string;
  path?: string;
  operation?: string;
  status?: number;
  durationMs?: number;
  closeCode?: number;
  err?: { type?: string; message?: string; stack?: string };
}

/** Every line the process wrote to stdout and stderr, except its human ready banner, parsed as JSON. */
function logLines(): LogLine[] {
  return gateway
    .output()
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('Petstore GraphQL gateway ready at'))
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

/**
 * The request lines with this id, once the first has come through the
 * process's stdout pipe (and a moment more, so that a second one would show).
 */
async function requestLines(requestId: string): Promise<LogLine[]> {
  const find = () => logLines().filter((line) => line.msg === 'request' && line.requestId === requestId);
  await waitFor(() => find().length > 0, `the log line of request ${requestId}`, 5_000).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return find();
}

async function graphql(query: string, headers: Record<string, string> = {}, variables?: Record<string, unknown>) {
  return fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the request log (LOG_LEVEL=info)', () => {
  it('writes one JSON line per request with the id given in X-Request-Id, returned in the answer', async () => {
    const requestId = `trace-${randomBytes(4).toString('hex')}.1:a`;
    const response = await graphql('query LoggedPets { pets(first: 1) { totalCount } }', {
      authorization: `Bearer ${token}`,
      'x-request-id': requestId,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const lines = await requestLines(requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request',
      requestId,
      method: 'POST',
      path: '/graphql',
      operation: 'LoggedPets',
      status: 200,
    });
    expect(typeof lines[0]!.durationMs).toBe('number');
    expect(lines[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof lines[0]!.time).toBe('number');
  });

  it('makes an id when none is given, or when the one given is not a plain token (and never echoes it)', async () => {
    const made = await graphql('query Unnamed { __typename }');
    const id = made.headers.get('x-request-id')!;
    expect(id).toMatch(UUID);
    expect(await requestLines(id)).toHaveLength(1);
    expect((await requestLines(id))[0]).toMatchObject({ operation: 'Unnamed', status: 200 });

    for (const unfit of ['two words', `id-${'x'.repeat(140)}`, 'a"quote']) {
      const replaced = await fetch(`${baseUrl}/healthz`, { headers: { 'x-request-id': unfit } });
      const replacedId = replaced.headers.get('x-request-id')!;
      expect(replacedId).toMatch(UUID);
      expect(await requestLines(replacedId)).toEqual([expect.objectContaining({ operation: 'GET /healthz', status: 200 })]);
      expect(gateway.output()).not.toContain(unfit);
    }
  });

  it('logs REST routes by route, refusals and GraphQL errors with their status', async () => {
    const rest = await fetch(`${baseUrl}/pets/${petId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(200);
    expect(await requestLines(rest.headers.get('x-request-id')!)).toEqual([
      expect.objectContaining({ method: 'GET', path: `/pets/${petId}`, operation: 'GET /pets/:petId', status: 200 }),
    ]);

    // A well-formed token signed with another key: refused, 401.
    const forged = await mintToken(new TextEncoder().encode('another-secret-that-is-long-enough-here'), {
      subject: 'mallory',
      scopes: ['orders:read'],
      expiresIn: '1h',
    });
    const refused = await graphql('query Refused { __typename }', { authorization: `Bearer ${forged}` });
    expect(refused.status).toBe(401);
    expect(await requestLines(refused.headers.get('x-request-id')!)).toEqual([
      expect.objectContaining({ path: '/graphql', status: 401 }),
    ]);

    const failing = await graphql(
      'mutation FailingWrite($name: String!) { createCategory(input: { name: $name }) { id } }',
      {},
      { name: 'personal-detail-7f3a' },
    );
    expect(await requestLines(failing.headers.get('x-request-id')!)).toEqual([
      expect.objectContaining({ operation: 'FailingWrite', status: 200 }),
    ]);
    // Variables (which may carry personal data) are not logged.
    expect(gateway.output()).not.toContain('personal-detail-7f3a');
    expect(gateway.output()).not.toContain(forged);
  });

  it('logs an unexpected error once, with its request id and the stack of where it was thrown; a refusal only as its request', async () => {
    const refused = await graphql(
      'mutation RefusedStock($petId: ID!) { updateInventory(petId: $petId, input: { quantity: -1 }) { quantity } }',
      { authorization: `Bearer ${token}` },
      { petId },
    );
    const refusal = (await refused.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(refusal.errors[0]!.extensions.code).toBe('VALIDATION_FAILED');
    const refusedId = refused.headers.get('x-request-id')!;
    expect(await requestLines(refusedId)).toEqual([expect.objectContaining({ operation: 'RefusedStock', status: 200 })]);
    expect(logLines().filter((line) => line.requestId === refusedId && line.level >= 40)).toEqual([]);

    const requestId = `broken-${randomBytes(4).toString('hex')}`;
    await database.prisma.$executeRawUnsafe('ALTER TABLE orders RENAME COLUMN ship_date TO ship_date_moved');
    try {
      const failed = await graphql('query BrokenOrders { orders(first: 1) { edges { node { shipDate } } } }', {
        authorization: `Bearer ${token}`,
        'x-request-id': requestId,
      });
      const body = (await failed.json()) as { errors: Array<{ extensions: { code: string } }> };
      expect(body.errors[0]!.extensions.code).toBe('INTERNAL');
    } finally {
      await database.prisma.$executeRawUnsafe('ALTER TABLE orders RENAME COLUMN ship_date_moved TO ship_date');
    }
    await requestLines(requestId);
    const errors = logLines().filter((line) => line.requestId === requestId && line.level >= 50);
    expect(errors).toEqual([expect.objectContaining({ msg: 'unexpected error while serving GraphQL', path: 'orders' })]);
    // What the client never sees, the operator does: the database's message and where it was raised.
    expect(errors[0]!.err!.message).toContain('ship_date');
    expect(errors[0]!.err!.stack).toMatch(/\n\s+at /);
  });

  it('never writes a token, an Authorization header or a body, whatever the transport', async () => {
    const subscriptionToken = await testToken(['orders:read'], 'log-subscriber');
    const sse = await subscribeSse(gateway.url, 'subscription Watch { petStatusChanged { petId } }', {
      token: subscriptionToken,
    });
    const socketId = `ws-${randomBytes(4).toString('hex')}`;
    const socket = await connectWebSocket(gateway.url, { token: subscriptionToken, headers: { 'x-request-id': socketId } });
    const ws = socket.subscribe('subscription { orderChanged { orderId } }');
    await untilSubscribed(baseUrl, 2);
    const sseLines = await requestLines(sse.headers.get('x-request-id')!);
    expect(sseLines).toEqual([expect.objectContaining({ operation: 'Watch', status: 200 })]);
    await sse.close();
    await ws.close();
    await socket.dispose();
    // The WebSocket connection has its line (its upgrade request) when it closes.
    expect(await requestLines(socketId)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/graphql', operation: 'websocket', status: 101, closeCode: 1000 }),
    ]);
    // A refused WebSocket connection with a token that is not one.
    await connectWebSocket(gateway.url, { token: 'not.a-token.at-all' }).catch(() => undefined);

    const output = gateway.output();
    for (const secret of [token, subscriptionToken]) {
      expect(output).not.toContain(secret);
      // Not even a part of one (the signature, or the claims).
      for (const part of secret.split('.').slice(1)) expect(output).not.toContain(part);
    }
    expect(output).not.toContain('not.a-token.at-all');
    expect(output).not.toMatch(/bearer/i);
    expect(output).not.toMatch(/authorization/i);
    expect(output).not.toContain('"query"');
    // And every request so far had exactly one line.
    const lines = logLines().filter((line) => line.msg === 'request');
    expect(new Set(lines.map((line) => line.requestId)).size).toBe(lines.length);
  });
});
