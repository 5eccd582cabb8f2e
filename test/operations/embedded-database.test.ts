import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, EmbeddedDatabaseInUseError, startEmbeddedPostgres } from '../../src/database/embedded.js';

/**
 * The embedded database (PGlite) is one PostgreSQL session. Through the wire
 * protocol it must behave as a server does for every connection a client
 * opens: whole exchanges and transactions kept apart, statement names of
 * each connection its own, nothing left behind by a connection that goes.
 */

let dataDir: string;
let embedded: EmbeddedPostgres;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-embedded-session-'));
  embedded = await startEmbeddedPostgres(dataDir, { idleTimeoutMs: 400 });
  const setup = new pg.Client({ connectionString: embedded.url });
  await setup.connect();
  await setup.query('CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL)');
  await setup.query('INSERT INTO counters SELECT g, 0 FROM generate_series(1, 50) AS g');
  await setup.end();
}, 60_000);

afterAll(async () => {
  await embedded?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sum() {
  const client = new pg.Client({ connectionString: embedded.url });
  await client.connect();
  try {
    return (await client.query<{ total: number }>('SELECT sum(value)::int AS total FROM counters')).rows[0]!.total;
  } finally {
    await client.end();
  }
}

describe('the embedded database shared by several connections', () => {
  it('answers each of many concurrent connections its own rows, with named statements, transactions and reconnections', async () => {
    const pool = new pg.Pool({ connectionString: embedded.url, max: 6, idleTimeoutMillis: 150 });
    const before = await sum();
    let increments = 0;
    try {
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          Array.from({ length: 300 }, async (_, i) => {
            const id = (i % 50) + 1;
            if (i % 5 === 0) {
              const client = await pool.connect();
              try {
                await client.query('BEGIN');
                const updated = await client.query({ name: 'increment', text: 'UPDATE counters SET value = value + 1 WHERE id = $1 RETURNING id', values: [id] });
                expect(updated.rows).toEqual([{ id }]);
                await client.query('COMMIT');
                increments++;
              } finally {
                client.release();
              }
              return;
            }
            // The same names on every connection, each meaning its own text: a shared namespace would mix them up.
            const named = await pool.query({ name: `read${i % 4}`, text: `SELECT id, ${i % 4} AS variant FROM counters WHERE id = $1`, values: [id] });
            expect(named.rows).toEqual([{ id, variant: i % 4 }]);
            const unnamed = await pool.query('SELECT $1::int AS echoed', [i]);
            expect(unnamed.rows).toEqual([{ echoed: i }]);
          }),
        );
        // Past the pool's idle timeout and the server's: every connection is new next round.
        await sleep(600);
      }
    } finally {
      await pool.end();
    }
    expect(await sum()).toBe(before + increments);
  });

  it('rolls back the transaction of a connection that goes mid-transaction, and serves the others meanwhile', async () => {
    const before = await sum();
    const leaving = new pg.Client({ connectionString: embedded.url });
    await leaving.connect();
    leaving.on('error', () => undefined);
    await leaving.query('BEGIN');
    await leaving.query('UPDATE counters SET value = value + 1000 WHERE id = 1');
    const waiting = sum();
    (leaving as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    expect(await waiting).toBe(before);
  });

  it('ends the exchange of a connection that goes between Parse and Sync', async () => {
    const socket = net.connect(Number(embedded.url.split(':')[2]!.split('/')[0]), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    const startup = Buffer.from('\0\0\0\0\0\x03\0\0user\0postgres\0database\0postgres\0\0', 'binary');
    startup.writeInt32BE(startup.length, 0);
    socket.write(startup);
    await sleep(100);
    // A Parse of a named statement, and no Sync: the exchange is left open.
    const text = Buffer.from('leftover\0SELECT 1\0\0\0', 'binary');
    const parse = Buffer.concat([Buffer.from('P\0\0\0\0', 'binary'), text]);
    parse.writeInt32BE(parse.length - 1, 1);
    socket.write(parse);
    await sleep(100);
    socket.destroy();
    expect(typeof (await sum())).toBe('number');
    const check = new pg.Client({ connectionString: embedded.url });
    await check.connect();
    const left = await check.query('SELECT count(*)::int AS statements FROM pg_prepared_statements');
    await check.end();
    expect(left.rows).toEqual([{ statements: 0 }]);
  });

  it('refuses a cancel request or an unreadable first packet by closing that connection only', async () => {
    const port = Number(embedded.url.split(':')[2]!.split('/')[0]);
    for (const packet of [Buffer.from([0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 1, 0, 0, 0, 2]), Buffer.from([0, 0, 0, 8, 0, 9, 0, 9])]) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(packet);
      await new Promise((resolve) => socket.once('close', resolve));
    }
    expect(typeof (await sum())).toBe('number');
  });

  it('closes connections idle past its idle timeout with PostgreSQL’s own error, and takes new ones', async () => {
    const client = new pg.Client({ connectionString: embedded.url });
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    await client.connect();
    await expect.poll(() => errors.map((error) => error.message)).toContain('terminating connection due to idle-session timeout');
    expect(typeof (await sum())).toBe('number');
  });

  it('is opened by one process at a time: a second start on the same folder is refused, naming it', async () => {
    await expect(startEmbeddedPostgres(dataDir)).rejects.toBeInstanceOf(EmbeddedDatabaseInUseError);
    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/is open in process \d+/);
  });
});
