import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { applyPendingMigrations } from '../src/migrations/migrations.js';
import { freePort } from './ports.js';

/**
 * A PostgreSQL primary and streaming replicas of it (one unless told), made for one test file
 * with the server's own tools (initdb, pg_basebackup, pg_ctl) in a temporary
 * folder, on free local ports, with one migrated database `petstore`. The
 * servers refuse to run as root, so they run as the postgres user when the
 * tests do. CI makes sure the tools are there (.ci/run); elsewhere a machine
 * without them skips the test with a line saying how to install them.
 */

const run = promisify(execFile);

/** Debian's server binaries, newest version first; undefined when none is installed. */
export function postgresServerBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(path.join(root, version, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0]!, 'bin') : undefined;
}

export function replicationAvailable(test: string): boolean {
  const found = postgresServerBinaries() !== undefined;
  if (!found && process.env.CI) throw new Error('PostgreSQL server binaries are missing in CI: .ci/run should have installed them.');
  if (!found) {
    console.warn(`SKIPPED ${test}: no PostgreSQL server binaries under /usr/lib/postgresql. Install them with \`apt-get install -y postgresql\`.`);
  }
  return found;
}

export interface ReplicatedServers {
  primaryUrl: string;
  /** The first replica's URL; `replicaUrls` has every replica's. */
  replicaUrl: string;
  replicaUrls: string[];
  /** Statements run on the replica (a connection of its own, for pausing replay and counting). */
  onReplica<T>(work: (client: pg.Client) => Promise<T>): Promise<T>;
  onPrimary<T>(work: (client: pg.Client) => Promise<T>): Promise<T>;
  /**
   * How many statements matching `pattern` a server has logged so far (every statement is logged):
   * `replica` is the first replica, `replica2` the second.
   */
  statementsOn(server: 'primary' | 'replica' | `replica${number}`, pattern: RegExp): Promise<number>;
  /** Stops a replica server (the first unless told; fast shutdown: its connections are cut) and starts it again. */
  stopReplica(index?: number): Promise<void>;
  startReplica(index?: number): Promise<void>;
  stop(): Promise<void>;
}

const DATABASE = 'petstore';

export interface ReplicatedServersOptions {
  replicas?: number;
  /**
   * Told the servers' folder and how to stop them as soon as the folder exists, before any server
   * starts: a caller that may be interrupted (the bench) can then undo a half-made pair too.
   */
  onCreated?: (dir: string, stop: () => Promise<void>) => void;
}

export async function startReplicatedServers({ replicas = 1, onCreated }: ReplicatedServersOptions = {}): Promise<ReplicatedServers> {
  const bin = postgresServerBinaries();
  if (!bin) throw new Error('No PostgreSQL server binaries.');
  const dir = await mkdtemp(path.join(tmpdir(), 'petstore-replication-'));
  await chmod(dir, 0o777);
  const asRoot = process.getuid?.() === 0;
  // Commands still running when the servers are stopped (initdb, pg_basebackup, pg_ctl start) are ended.
  const commands = new AbortController();
  const as = (command: string, args: string[], signal: AbortSignal | undefined = commands.signal) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args], { signal })
      : run(path.join(bin, command), args, { signal });
  const primaryPort = await freePort();
  const replicaPorts: number[] = [];
  for (let i = 0; i < replicas; i++) replicaPorts.push(await freePort());
  const replicaPort = replicaPorts[0]!;
  const primaryDir = path.join(dir, 'primary');
  const replicaName = (index: number) => (index === 0 ? 'replica' : `replica${index + 1}`);
  const replicaDirs = replicaPorts.map((_, index) => path.join(dir, replicaName(index)));
  const settings = (port: number) =>
    ['-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off -c log_statement=all`];
  const start = (data: string, port: number, log: string) => as('pg_ctl', ['-D', data, '-l', path.join(dir, log), '-w', '-t', '30', ...settings(port), 'start']);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      commands.abort();
      for (const data of [...replicaDirs, primaryDir]) await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], undefined).catch(() => undefined);
      // A postmaster that pg_ctl could not find (stopped before it wrote its pid file) is found by its folder.
      for (const pid of postmastersUnder(dir)) {
        try {
          process.kill(pid, 'SIGQUIT');
        } catch {
          // gone meanwhile
        }
      }
      await rm(dir, { recursive: true, force: true });
    })());
  onCreated?.(dir, stop);

  const url = (port: number) => `postgresql://postgres@127.0.0.1:${port}/${DATABASE}`;
  const connect = async <T>(connectionString: string, work: (client: pg.Client) => Promise<T>) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const onPrimary = <T>(work: (client: pg.Client) => Promise<T>) => connect(url(primaryPort), work);
  const onReplica = <T>(work: (client: pg.Client) => Promise<T>) => connect(url(replicaPort), work);

  try {
    // wal_level replica and wal senders are initdb's defaults.
    await as('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions']);
    await start(primaryDir, primaryPort, 'primary.log');
    for (const [index, replicaDir] of replicaDirs.entries()) {
      await as('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
      await start(replicaDir, replicaPorts[index]!, `${replicaName(index)}.log`);
    }
    await connect(`postgresql://postgres@127.0.0.1:${primaryPort}/postgres`, (client) => client.query(`CREATE DATABASE ${DATABASE}`));
    await applyPendingMigrations(url(primaryPort));
    // The replica has caught up with the migrations before any test reads it (asked in the server's
    // own database: until then the replica may not have the new one).
    for (const port of replicaPorts) await waitForReplay(onPrimary, (work) => connect(`postgresql://postgres@127.0.0.1:${port}/postgres`, work));
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    primaryUrl: url(primaryPort),
    replicaUrl: url(replicaPort),
    replicaUrls: replicaPorts.map(url),
    onPrimary,
    onReplica,
    async statementsOn(server, pattern) {
      const log = await readFile(path.join(dir, `${server}.log`), 'utf8');
      return log.split('\n').filter((line) => pattern.test(line)).length;
    },
    async stopReplica(index = 0) {
      await as('pg_ctl', ['-D', replicaDirs[index]!, '-m', 'fast', '-w', 'stop']);
    },
    async startReplica(index = 0) {
      await start(replicaDirs[index]!, replicaPorts[index]!, `${replicaName(index)}.log`);
    },
    stop,
  };
}

/** PostgreSQL servers whose data folder is under `dir`, by their command line (`postgres -D <dir>/…`). */
export function postmastersUnder(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (path.basename(args[0] ?? '') === 'postgres' && args.some((arg) => arg.startsWith(`${dir}/`))) found.push(Number(entry));
  }
  return found;
}

/** Waits until the replica has replayed everything the primary has written so far. */
export async function waitForReplay(
  onPrimary: ReplicatedServers['onPrimary'],
  onReplica: ReplicatedServers['onReplica'],
  timeoutMs = 20_000,
): Promise<void> {
  const { rows } = await onPrimary((client) => client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'));
  const target = rows[0]!.lsn;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows: replayed } = await onReplica((client) =>
      client.query<{ caught: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [target]),
    );
    if (replayed[0]?.caught) return;
    if (Date.now() > deadline) throw new Error(`The replica did not replay up to ${target} in ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
