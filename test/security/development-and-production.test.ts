import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mintToken } from '../../src/auth/tokens.js';
import { createMigratedDatabase, dropDatabase } from '../support/database.js';
import { bearer, expectRefusal, type GraphQLAnswer, postGraphQL, send } from '../support/http.js';
import { freePort, type GatewayProcess, npmRun, projectRoot, run, startGateway, stopAll } from '../support/processes.js';

/**
 * The real gateway process (`tsx src/main.ts`, as `npm start` runs it) and
 * `npm run token`: development keys and tokens, production's refusal to start
 * without a key and its defaults, and an identity provider's JWKS. (One rate
 * limit shared through Redis by two processes: rate-limit.test.ts.)
 */

const folders: string[] = [];
let databaseUrl: string;
let databaseName: string;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  const database = await createMigratedDatabase(inject('templateDatabase'));
  databaseUrl = database.url;
  databaseName = database.name;
});

afterAll(async () => {
  await Promise.all(running.map((gateway) => gateway.stop().catch(() => undefined)));
  stopAll();
  await dropDatabase(databaseName);
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function dataFolder(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'petstore-security-'));
  folders.push(folder);
  return folder;
}

async function start(settings: Record<string, string>): Promise<{ gateway: GatewayProcess; baseUrl: string }> {
  const gateway = await startGateway({
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ...settings,
  });
  running.push(gateway);
  return { gateway, baseUrl: gateway.url.replace(/\/graphql$/, '') };
}

/**
 * Stops a gateway. (Its graceful exit is npm-start.test.ts's to check: under load tsx may give the
 * process only 60 ms to acknowledge SIGTERM before it kills it and exits 143.)
 */
async function stop(gateway: GatewayProcess) {
  await gateway.stop();
  running.splice(running.indexOf(gateway), 1);
}

/** The token `npm run token` printed: the last line of its output. */
function printedToken(stdout: string): string {
  const token = stdout.trim().split('\n').at(-1)!.trim();
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  return token;
}

const ordersQuery = { query: '{ orders { totalCount } }' };

describe('development: a key for the data folder, and npm run token', () => {
  it('mints a token the gateway of that data folder accepts, and only that one', { timeout: 120_000 }, async () => {
    const dataDir = await dataFolder();
    const minted = await npmRun('token', ['--scope', 'orders:read', '--subject', 'dev-tester'], { DATA_DIR: dataDir });
    expect(minted.code, minted.stderr).toBe(0);
    const token = printedToken(minted.stdout);
    // The key was made for the folder, readable by its owner only.
    expect((await stat(path.join(dataDir, 'dev-jwt-secret'))).mode & 0o777).toBe(0o600);

    const { gateway, baseUrl } = await start({ DATA_DIR: dataDir });
    // The start-up banner says how to get a token (it follows the ready line).
    await expect.poll(() => gateway.output()).toContain('npm run token -- --scope orders:read');

    const allowed = await postGraphQL(baseUrl, ordersQuery, bearer(token));
    expect(allowed.body).toEqual({ data: { orders: { totalCount: 0 } } });
    const anonymous = await postGraphQL(baseUrl, ordersQuery);
    expect(anonymous.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    const lacking = await postGraphQL(baseUrl, { query: 'mutation { createCategory(input: { name: "Dev" }) { id } }' }, bearer(token));
    expect(lacking.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });

    // A token minted for another data folder is signed with another key.
    const elsewhere = await npmRun('token', ['--scope', 'orders:read'], { DATA_DIR: await dataFolder() });
    const stranger = await postGraphQL(baseUrl, ordersQuery, bearer(printedToken(elsewhere.stdout)));
    expectRefusal(stranger, 'UNAUTHENTICATED', 401);
    await stop(gateway);

    // The key stays: the same token is accepted after a restart.
    const again = await start({ DATA_DIR: dataDir });
    expect((await postGraphQL(again.baseUrl, ordersQuery, bearer(token))).status).toBe(200);
    await stop(again.gateway);
  });

  it('refuses an unknown scope and names the ones there are', { timeout: 60_000 }, async () => {
    const refused = await npmRun('token', ['--scope', 'orders:read', '--scope', 'orders:delete'], {
      DATA_DIR: await dataFolder(),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Unknown scope orders:delete.');
    expect(refused.stderr).toContain('Scopes: orders:read, orders:write, catalog:write, inventory:write');
    expect(refused.stdout).not.toMatch(/eyJ/);
  });
});

describe('production', () => {
  it('refuses to start without AUTH_JWT_SECRET or AUTH_JWKS_URL, saying so', { timeout: 60_000 }, async () => {
    const tsx = path.join(projectRoot, 'node_modules/.bin/tsx');
    const refused = await run(tsx, ['src/main.ts'], {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      DATA_DIR: await dataFolder(),
      PORT: String(await freePort()),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'In production AUTH_JWT_SECRET or AUTH_JWKS_URL must be set: the gateway does not make its own key there',
    );
    expect(refused.stdout).not.toContain('ready');
    const token = await npmRun('token', ['--scope', 'orders:read'], { NODE_ENV: 'production', DATA_DIR: await dataFolder() });
    expect(token.code).toBe(1);
    expect(token.stderr).toContain('In production AUTH_JWT_SECRET or AUTH_JWKS_URL must be set');
  });

  it('with a secret: tokens signed with it work; GraphiQL, introspection and suggestions are off', {
    timeout: 60_000,
  }, async () => {
    const secret = 'a-production-secret-of-at-least-32-characters';
    const { gateway, baseUrl } = await start({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret });
    const token = await mintToken(new TextEncoder().encode(secret), {
      subject: 'ops',
      scopes: ['orders:read'],
      expiresIn: '5m',
    });
    expect((await postGraphQL(baseUrl, ordersQuery, bearer(token))).body).toEqual({ data: { orders: { totalCount: 0 } } });

    const page = await send(baseUrl, '/graphql', { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).not.toMatch(/text\/html/);
    expect(page.text).not.toContain('renderYogaGraphiQL');

    const introspection = await postGraphQL<GraphQLAnswer>(baseUrl, { query: '{ __schema { queryType { name } } }' });
    expect(introspection.body.errors?.[0]?.message).toContain('introspection has been disabled');
    const suggestion = await postGraphQL<GraphQLAnswer>(baseUrl, { query: '{ petz { id } }' });
    expect(suggestion.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(suggestion.text).not.toContain('Did you mean');
    // No development hints once it has answered (the banner would follow the ready line at once).
    expect(gateway.output()).not.toContain('npm run token');
    await stop(gateway);
  });

  describe('with an identity provider (AUTH_JWKS_URL)', () => {
    let jwks: Server;
    let jwksUrl: string;
    let privateKey: CryptoKey;
    beforeAll(async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      privateKey = pair.privateKey;
      const key = { ...(await exportJWK(pair.publicKey)), kid: 'prod-key', alg: 'RS256', use: 'sig' };
      jwks = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key] }));
      });
      await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
      jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    });
    afterAll(() => new Promise<void>((resolve) => jwks.close(() => resolve())));

    const providerToken = (audience: string) =>
      new SignJWT({ scp: ['orders:read'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'prod-key' })
        .setIssuer('https://id.example/')
        .setAudience(audience)
        .setSubject('customer-42')
        .setExpirationTime('5m')
        .sign(privateKey);

    it('accepts the provider’s tokens for its audience only', { timeout: 60_000 }, async () => {
      const { gateway, baseUrl } = await start({
        NODE_ENV: 'production',
        AUTH_JWKS_URL: jwksUrl,
        AUTH_ISSUER: 'https://id.example/',
        AUTH_AUDIENCE: 'petstore',
      });
      const allowed = await postGraphQL(baseUrl, ordersQuery, bearer(await providerToken('petstore')));
      expect(allowed.body).toEqual({ data: { orders: { totalCount: 0 } } });
      const other = await postGraphQL(baseUrl, ordersQuery, bearer(await providerToken('someone-else')));
      expectRefusal(other, 'UNAUTHENTICATED', 401);
      await stop(gateway);
    });
  });
});
