import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type EmbeddedSessionServer, serveEmbeddedSession } from './embedded-session.js';

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
  /** Wire connections open now. */
  connections(): number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The embedded server closes a connection idle this long, as PostgreSQL's idle_session_timeout (0: never). */
  idleTimeoutMs?: number;
}

/** Kept inside the database folder, so deleting that folder to start afresh also forgets the seed. */
const DEMO_DATA_MARKER = 'petstore-demo-data-loaded';
/** Held while a process has the database open: PGlite itself does not stop a second one opening it too. */
const LOCK_FILE = 'petstore.lock';

/** The embedded database folder is open in another process that is still running. */
export class EmbeddedDatabaseInUseError extends Error {
  constructor(folder: string, pid: number) {
    super(
      `The embedded database in ${folder} is open in process ${pid} (another npm start, or a db: command). ` +
        'Stop that one first, or give this one another DATA_DIR.',
    );
    this.name = 'EmbeddedDatabaseInUseError';
  }
}

/**
 * PostgreSQL compiled to WebAssembly (PGlite), kept in `<dataDir>/pglite` and
 * served on a loopback port with the wire protocol, so the gateway talks to it
 * exactly as it talks to a real server. It is the default when no DATABASE_URL
 * is given: `npm start` needs nothing installed. PGlite is a single session;
 * src/database/embedded-session.ts shares it between connections.
 */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const folder = path.join(dataDir, 'pglite');
  const marker = path.join(folder, DEMO_DATA_MARKER);
  const created = !existsSync(folder);
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockFolder(dataDir);
  let db: PGlite | undefined;
  let server: EmbeddedSessionServer | undefined;
  try {
    db = await PGlite.create(folder);
    server = await serveEmbeddedSession(db, { idleTimeoutMs: options.idleTimeoutMs ?? 0 });
  } catch (error) {
    await db?.close().catch(() => undefined);
    await unlock();
    throw error;
  }
  const embedded: EmbeddedPostgres = {
    url: `postgresql://postgres@${server.address}/postgres?sslmode=disable`,
    created,
    demoDataLoaded: existsSync(marker),
    async markDemoDataLoaded() {
      await writeFile(marker, `${new Date().toISOString()}\n`);
      embedded.demoDataLoaded = true;
    },
    connections: () => server.connections(),
    async stop() {
      await server.stop();
      await db.close();
      await unlock();
    },
  };
  return embedded;
}

/** Takes the folder's lock file (created exclusively), taking over one left by a process that no longer runs. */
async function lockFolder(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(holder) && isRunning(holder)) {
        throw new EmbeddedDatabaseInUseError(path.join(dataDir, 'pglite'), holder);
      }
      await rm(file, { force: true });
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
