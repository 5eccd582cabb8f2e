import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** A connection URL for pg and Prisma. */
  url: string;
  /** True when this start created the database folder (a first start). */
  created: boolean;
  /**
   * True once the demo data has been loaded into this database (by `npm start`
   * or `npm run db:seed`). A database that `npm run db:migrate` created, or
   * whose first start was interrupted before the seed finished, still needs it.
   */
  demoDataLoaded: boolean;
  /** Records that the demo data is in, so later starts leave the data alone. */
  markDemoDataLoaded(): Promise<void>;
  stop(): Promise<void>;
}

/** Kept inside the database folder, so deleting that folder to start afresh also forgets the seed. */
const DEMO_DATA_MARKER = 'petstore-demo-data-loaded';

/**
 * PostgreSQL compiled to WebAssembly (PGlite), kept in `<dataDir>/pglite` and
 * served on a loopback port with the wire protocol, so the gateway talks to it
 * exactly as it talks to a real server. It is the default when no DATABASE_URL
 * is given: `npm start` needs nothing installed.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const folder = path.join(dataDir, 'pglite');
  const marker = path.join(folder, DEMO_DATA_MARKER);
  const created = !existsSync(folder);
  await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(folder);
  // PGlite runs one statement at a time; the socket server queues queries and
  // keeps each connection's transaction to itself.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 8 });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  const embedded: EmbeddedPostgres = {
    url,
    created,
    demoDataLoaded: existsSync(marker),
    async markDemoDataLoaded() {
      await writeFile(marker, `${new Date().toISOString()}\n`);
      embedded.demoDataLoaded = true;
    },
    async stop() {
      await server.stop();
      await db.close();
    },
  };
  return embedded;
}
