import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { createMigratedDatabase, dropDatabase } from '../support/database.js';
import { freePort, type GatewayProcess, startGateway, stopAll } from '../support/processes.js';
import { connectWebSocket, waitFor } from '../support/subscriptions.js';

/**
 * What the real process writes when WebSocket clients misbehave: a message
 * over the size limit closes that connection with 1009, an operation over a
 * query limit is refused alone, and every line the process writes after its
 * ready banner is one JSON object (no multi-line stacks on stdout or stderr).
 */

let databaseName: string;
let gateway: GatewayProcess;
let folder: string;

beforeAll(async () => {
  const database = await createMigratedDatabase(inject('templateDatabase'));
  databaseName = database.name;
  folder = await mkdtemp(path.join(tmpdir(), 'petstore-ws-'));
  gateway = await startGateway({
    DATABASE_URL: database.url,
    DATA_DIR: folder,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    BODY_LIMIT_BYTES: '2048',
    MAX_ALIASES: '5',
  });
});

afterAll(async () => {
  await gateway?.stop().catch(() => undefined);
  stopAll();
  await dropDatabase(databaseName);
  await rm(folder, { recursive: true, force: true });
});

describe('WebSocket errors in the real process', () => {
  it('closes an oversized message with 1009 and logs it as one JSON line; a limit fails only its operation', async () => {
    const socket = new WebSocket(gateway.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ __typename } # ${'x'.repeat(4_000)}` } }));
    expect(await closed).toBe(1009);

    const connection = await connectWebSocket(gateway.url);
    const refused = connection.subscribe(`{ ${Array.from({ length: 6 }, (_, i) => `a${i}: __typename`).join(' ')} }`);
    expect(await refused.ended).toMatchObject({ kind: 'error' });
    expect(await connection.subscribe('{ __typename }').next()).toEqual({ data: { __typename: 'Query' } });
    await connection.dispose();

    await waitFor(() => /WebSocket connection error/.test(gateway.output()), 'the logged connection error');
    // Besides the ready banner for people (and its development-token hint), only JSON lines.
    const banner = /^(Petstore GraphQL gateway ready|Tokens are checked|Reads of the catalogue| {2}npm run token|and send it as)/;
    const lines = gateway
      .output()
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '' && !banner.test(line));
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const logged = lines.map((line) => JSON.parse(line) as { msg?: string; code?: string });
    expect(logged.filter((line) => line.msg === 'WebSocket connection error')).toEqual([
      expect.objectContaining({ code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' }),
    ]);
  });
});
