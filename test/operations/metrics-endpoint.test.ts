import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMigratedDatabase, dropDatabase } from '../support/database.js';
import { freePort, type GatewayProcess, startGateway, stopAll } from '../support/processes.js';

/**
 * /metrics kept from clients: on a port of its own (METRICS_PORT), where it
 * answers only with the bearer token METRICS_TOKEN, and gone from the API's port.
 */

const TOKEN = 'scrape-token-0123456789';
let databaseName: string;
let folder: string;
let gateway: GatewayProcess;
let metricsPort: number;

beforeAll(async () => {
  const database = await createMigratedDatabase(inject('templateDatabase'));
  databaseName = database.name;
  folder = await mkdtemp(path.join(tmpdir(), 'petstore-metrics-'));
  metricsPort = await freePort();
  gateway = await startGateway({
    DATABASE_URL: database.url,
    DATA_DIR: folder,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    METRICS_PORT: String(metricsPort),
    METRICS_TOKEN: TOKEN,
    LOG_LEVEL: 'warn',
  });
});

afterAll(async () => {
  await gateway?.stop().catch(() => undefined);
  stopAll();
  await dropDatabase(databaseName);
  await rm(folder, { recursive: true, force: true });
});

describe('METRICS_PORT and METRICS_TOKEN', () => {
  it('serves /metrics only on its own port, only with the token', async () => {
    const api = gateway.url.replace(/\/graphql$/, '');
    await fetch(`${api}/graphql?query=%7B__typename%7D`);
    expect((await fetch(`${api}/metrics`)).status).toBe(404);

    const scrape = (headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers });
    const anonymous = await scrape();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await anonymous.json()).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect((await scrape({ authorization: 'Bearer not-the-token-at-all' })).status).toBe(401);

    const scraped = await scrape({ authorization: `Bearer ${TOKEN}` });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^petstore_requests_total\{operation="query",status="200"\} 1$/m);
  });

  it('refuses a token too short to be a secret, at start-up', async () => {
    await expect(
      startGateway({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres', METRICS_TOKEN: 'short', PORT: '0' }, 20_000),
    ).rejects.toThrow(/METRICS_TOKEN must be at least 16 characters/);
  });
});
