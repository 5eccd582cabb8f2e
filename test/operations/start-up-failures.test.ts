import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, emptyDatabase, migratedDatabase, startProcess } from '../support/operations.js';
import { TEST_JWT_SECRET } from '../support/tokens.js';
import { freePort, startGateway, stopAll } from '../support/processes.js';
import { waitFor } from '../support/subscriptions.js';

/**
 * Start-up tells the truth: a port already taken stops the process with a
 * non-zero exit and one clear line (also the embedded start, which used to run
 * on without listening); the start-up log says which database it reached
 * (never its password), what is exposed, and whether it can serve; a database
 * without the migrations is not reported as ready.
 */

let taken: net.Server;
let takenPort: number;
const folders: string[] = [];

beforeAll(async () => {
  taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()));
  stopAll();
  await cleanUp();
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

const jsonLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

describe('start-up', () => {
  it('stops with exit code 1 and one clear line when the port is taken (production)', async () => {
    const database = await migratedDatabase();
    const failure = await startGateway(
      { NODE_ENV: 'production', DATABASE_URL: database.url, AUTH_JWT_SECRET: TEST_JWT_SECRET, HOST: '127.0.0.1', PORT: String(takenPort) },
      30_000,
    ).then(
      () => 'started',
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited \(code 1,/);
    expect(failure).toContain(`Cannot start the gateway: port ${takenPort} on 127.0.0.1 is already in use`);
    expect(failure).not.toContain('gateway ready');
  });

  it('stops the embedded start too, instead of running without listening', { timeout: 90_000 }, async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'petstore-start-'));
    folders.push(folder);
    const failure = await startGateway({ DATA_DIR: folder, HOST: '127.0.0.1', PORT: String(takenPort) }, 80_000).then(
      () => 'started',
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited \(code 1,/);
    expect(failure).toContain('is already in use');
  });

  it('logs the database it reached without its password, what is exposed, and that it is ready', async () => {
    const database = await migratedDatabase();
    const url = new URL(database.url);
    url.password = 'not-to-be-logged';
    const gateway = await startProcess(url.toString(), { LOG_LEVEL: 'info', PORT: String(await freePort()) });
    await waitFor(() => gateway.output().includes('"gateway ready"'), 'the start-up line');
    const ready = jsonLines(gateway.output()).find((line) => line.msg === 'gateway ready');
    expect(ready).toMatchObject({
      database: `127.0.0.1:${url.port || 5432}/${database.name}`,
      graphiql: true,
      introspection: true,
    });
    expect(gateway.output()).not.toContain('not-to-be-logged');
    await gateway.stop();
  });

  it('does not call a database without its migrations ready: it warns, naming what is missing', async () => {
    const database = await emptyDatabase();
    const gateway = await startProcess(database.url, { LOG_LEVEL: 'info', NODE_ENV: 'production' });
    await waitFor(() => gateway.output().includes('gateway listening, but not ready'), 'the start-up warning');
    const lines = jsonLines(gateway.output());
    expect(lines.some((line) => line.msg === 'gateway ready')).toBe(false);
    const warning = lines.find((line) => line.msg.startsWith('gateway listening, but not ready'));
    expect(String(warning?.reason)).toMatch(/migrations|db:migrate/);
    await waitFor(() => gateway.output().includes('Not ready to serve yet:'), 'the line for people on stderr');
    expect((await fetch(`${gateway.url.replace(/\/graphql$/, '')}/readyz`)).status).toBe(503);
    await gateway.stop();
  });
});
