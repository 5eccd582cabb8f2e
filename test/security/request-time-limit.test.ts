import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { bearer, expectRefusal, postGraphQL } from '../support/http.js';
import { arrangePets } from '../support/operations.js';

/**
 * REQUEST_TIMEOUT_MS bounds the whole request, the guards before GraphQL and
 * REST included: here an identity provider whose key set never answers
 * (jose alone would wait 5 s for it).
 */

const LIMIT_MS = 500;
let silentProvider: Server;
let jwksUrl = '';
const held: ServerResponse[] = [];

beforeAll(async () => {
  silentProvider = createServer((_request, response) => {
    held.push(response);
  });
  await new Promise<void>((resolve) => silentProvider.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(silentProvider.address() as AddressInfo).port}/.well-known/jwks.json`;
});

afterAll(async () => {
  for (const response of held) response.destroy();
  await new Promise<void>((resolve) => silentProvider.close(() => resolve()));
});

const quick = useTestGateway({ limits: { requestTimeoutMs: LIMIT_MS } });
const gateway = useTestGateway({
  limits: { requestTimeoutMs: LIMIT_MS },
  tokenKeys: () => ({ kind: 'jwks', url: jwksUrl, issuer: 'https://id.test/', audience: 'petstore' }),
});

describe('the request time limit', () => {
  it('answers 503 TIMEOUT at the limit while the identity provider does not answer', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ scope: 'orders:read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'some-key' })
      .setIssuer('https://id.test/')
      .setAudience('petstore')
      .setSubject('someone')
      .setExpirationTime('5m')
      .sign(privateKey);
    const startedAt = performance.now();
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(token));
    const tookMs = performance.now() - startedAt;
    expectRefusal(answer, 'TIMEOUT', 503);
    // A bound with a generous margin, well below the 5 s jose would wait on its own.
    expect(tookMs).toBeLessThan(LIMIT_MS + 2_500);
  });

  it('stops its work once it has answered: the running statement is cancelled and rolled back, the next mutation never starts', async () => {
    const { pets } = await arrangePets(quick.prisma, 10, 10);
    const first = pets[0]!;
    const second = pets[1]!;
    // Hold the first pet's row, so the first mutation waits past the time limit.
    await whileLocked(quick.databaseUrl, 'SELECT id FROM pets WHERE id = $1 FOR UPDATE', [first.id], async (holder) => {
      const answer = await quick.graphql(
        `mutation { first: updateInventory(petId: "${first.id}", input: { quantity: 5 }) { quantity }
                    second: updateInventory(petId: "${second.id}", input: { quantity: 7 }) { quantity } }`,
      );
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT', status: 503 });
      // While the row is still held, the gateway's statement no longer waits for it: it was cancelled.
      await expect.poll(() => waitingForLocks(holder), { timeout: 3_000 }).toBe(0);
    });
    // The first mutation was rolled back as a whole, and the second never started.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await quick.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(first.id) } })).quantity).toBe(10);
    expect((await quick.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(second.id) } })).quantity).toBe(10);
  });

  it('cancels an order placed in one statement (its own transaction) while it waits: nothing is written', async () => {
    const { pets } = await arrangePets(quick.prisma, 5);
    const pet = pets[0]!;
    const ordersBefore = await quick.prisma.order.count({ where: { petId: BigInt(pet.id) } });
    await whileLocked(quick.databaseUrl, 'SELECT id FROM pets WHERE id = $1 FOR UPDATE', [pet.id], async (holder) => {
      // Only the order asked for: placeOrder is the one statement place_order, waiting for the pet's row.
      const answer = await quick.graphql(`mutation { placeOrder(input: { petId: "${pet.id}", quantity: 2 }) { id } }`);
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT', status: 503 });
      await expect.poll(() => waitingForLocks(holder), { timeout: 3_000 }).toBe(0);
    });
    // Had the statement not been cancelled, it would now take the row and place the order.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await quick.prisma.order.count({ where: { petId: BigInt(pet.id) } })).toBe(ordersBefore);
    expect((await quick.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(pet.id) } })).quantity).toBe(5);
  });

  it('cancels a planned order the same way (its document run before), and answers it from that outcome, not a second run', async () => {
    const { pets } = await arrangePets(quick.prisma, 5);
    const pet = pets[0]!;
    const place = `mutation { placeOrder(input: { petId: "${pet.id}", quantity: 2 }) { id } }`;
    // Yoga runs the document first; its plan answers it from then on.
    expect((await quick.graphql(place)).errors).toBeUndefined();
    await whileLocked(quick.databaseUrl, 'SELECT id FROM pets WHERE id = $1 FOR UPDATE', [pet.id], async (holder) => {
      quick.statements.length = 0;
      const answer = await quick.graphql(place);
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT', status: 503 });
      await expect.poll(() => waitingForLocks(holder), { timeout: 3_000 }).toBe(0);
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // One statement was sent for it, and cancelled: the first order only.
    expect(quick.statements.filter((sql) => sql.includes('place_order('))).toHaveLength(1);
    expect(await quick.prisma.order.count({ where: { petId: BigInt(pet.id) } })).toBe(1);
    expect((await quick.prisma.inventoryItem.findUniqueOrThrow({ where: { petId: BigInt(pet.id) } })).quantity).toBe(3);
  });

  it('cancels a read still running at the limit, so its connection serves the next request', async () => {
    const { pets } = await arrangePets(quick.prisma, 3);
    // Every read of pets now waits for this lock.
    await whileLocked(quick.databaseUrl, 'LOCK TABLE pets IN ACCESS EXCLUSIVE MODE', [], async (holder) => {
      // A page (a lookup by id is batched with other requests' and is not one request's to cancel).
      const answer = await quick.graphql('{ pets(first: 5) { nodes { name } } }');
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'TIMEOUT', status: 503 });
      await expect.poll(() => waitingForLocks(holder), { timeout: 3_000 }).toBe(0);
    });
    expect((await quick.graphql(`{ pet(id: "${pets[0]!.id}") { name } }`)).data).toEqual({ pet: { name: pets[0]!.name } });
  });
});

/** Runs `work` while another session holds the lock `lockSql` takes, in a transaction committed after it. */
async function whileLocked(url: string, lockSql: string, params: unknown[], work: (holder: pg.Client) => Promise<void>) {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(lockSql, params);
  try {
    await work(holder);
  } finally {
    await holder.query('COMMIT');
    await holder.end();
  }
}

/** Statements of other sessions of this database waiting for a lock. */
async function waitingForLocks(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.waiting;
}
