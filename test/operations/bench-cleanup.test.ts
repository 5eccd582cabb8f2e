import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchSettings, soakSettings } from '../../bench/lib/options.js';
import { withAdmin } from '../support/database.js';
import { commandEnv, npmRun, projectRoot, run } from '../support/processes.js';
import { postmastersUnder, replicationAvailable } from '../../harness/replication.js';

/**
 * `npm run bench` and `npm run soak`, interrupted as people and supervisors interrupt them: SIGTERM
 * to the npm process (a process manager, `kill <pid>`), and SIGINT to the whole process group (a
 * terminal's Ctrl-C). Whatever the run said it started or made (each is logged: `started <name>
 * (pid …) at <url>`, `created database …`, the folders) must be gone once npm has exited: the
 * processes, their ports, the database, the folders, the replica servers (which pg_ctl puts in a
 * session of their own), and anything else in the run's process group. Both run with the
 * shortest settings, on the existing build, without PostGraphile (the bench's replica pass alone).
 */

const RESULT_NAME = `cleanup-test-${process.pid}`;
const running = new Set<ChildProcess>();

/** The run's own settings only: none inherited from whoever runs the tests. */
function runEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = commandEnv({});
  for (const name of Object.keys(env)) if (name.startsWith('BENCH_') || name.startsWith('SOAK_')) delete env[name];
  return { ...env, BENCH_SKIP_BUILD: '1', BENCH_OUTPUT: RESULT_NAME, SOAK_OUTPUT: RESULT_NAME, ...settings };
}

interface Run {
  child: ChildProcess;
  output(): string;
  /** Resolves once the output matches every pattern; rejects if the run exits first or takes too long. */
  waitFor(patterns: RegExp[], timeoutMs: number): Promise<void>;
  /** npm's own exit: what it started must be gone by then. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm run <script>` in a process group of its own (so the test can signal the group as a terminal does). */
function startRun(script: string, settings: Record<string, string>): Run {
  const child = spawn('npm', ['run', script], {
    cwd: projectRoot,
    env: runEnv(settings),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: string) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout?.setEncoding('utf8').on('data', onData);
  child.stderr?.setEncoding('utf8').on('data', onData);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const listener of listeners) listener();
      // The rest of the output, unless something that outlived npm still holds its pipes.
      void Promise.race([closed, new Promise((wait) => setTimeout(wait, 2_000))]).then(() => resolve({ code, signal }));
    }),
  );
  return {
    child,
    output: () => output,
    exited,
    waitFor: (patterns, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (patterns.every((pattern) => pattern.test(output))) {
            done();
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`npm run ${script} exited before it printed ${patterns.join(', ')}:\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`npm run ${script} did not print ${patterns.join(', ')} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
  };
}

/** Everything a run's log says it started or made. */
function madeBy(output: string) {
  return {
    servers: [...output.matchAll(/started (\S+) \(pid (\d+)\) at http:\/\/127\.0\.0\.1:(\d+)/g)].map((match) => ({
      name: match[1]!,
      pid: Number(match[2]),
      port: Number(match[3]),
    })),
    databases: [...output.matchAll(/created database (\S+)/g)].map((match) => match[1]!),
    folders: [...output.matchAll(/(?:replica servers' folder|embedded DATA_DIR): (\S+)/g)].map((match) => match[1]!),
  };
}

/** Alive, and not a zombie waiting for its parent to read its exit status. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Processes of a process group, zombies aside. */
function groupMembers(pgid: number): string[] {
  const members: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === pgid) {
        members.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const existingDatabases = (names: string[]) =>
  withAdmin(async (admin) =>
    (await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])).rows.map((row) => row.datname),
  );

/** What is still there of what the run made, once npm has exited: all empty when it cleaned up. */
async function leftovers(run: Run) {
  const made = madeBy(run.output());
  const ports: number[] = [];
  for (const server of made.servers) if (await portOpen(server.port)) ports.push(server.port);
  return {
    processes: made.servers.filter((server) => alive(server.pid)).map((server) => `${server.name} (pid ${server.pid})`),
    ports,
    databases: made.databases.length ? await existingDatabases(made.databases) : [],
    folders: made.folders.filter((folder) => existsSync(folder)),
    postgresServers: made.folders.flatMap((folder) => postmastersUnder(folder)),
    processGroup: groupMembers(run.child.pid!),
  };
}

const nothingLeft = { processes: [], ports: [], databases: [], folders: [], postgresServers: [], processGroup: [] };

/**
 * Leftovers, asked again for a few seconds while there are any: a process that npm's exit has just
 * orphaned (tsx's esbuild service) may take a moment to read its end of file. A leak stays.
 */
async function settledLeftovers(run: Run) {
  let found = await leftovers(run);
  for (let i = 0; i < 10 && JSON.stringify(found) !== JSON.stringify(nothingLeft); i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    found = await leftovers(run);
  }
  return found;
}

/** The newest modification time under `dir`, in ms. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

beforeAll(async () => {
  // The runs start dist/ as it is (BENCH_SKIP_BUILD=1): build it when it is missing or older than the source.
  const main = path.join(projectRoot, 'dist/src/main.js');
  if (!existsSync(main) || statSync(main).mtimeMs < Math.max(newest(path.join(projectRoot, 'src')), newest(path.join(projectRoot, 'prisma')))) {
    const built = await run('node_modules/.bin/tsc', ['-p', 'tsconfig.build.json'], {}, 240_000);
    expect(built.code, built.stdout + built.stderr).toBe(0);
  }
}, 300_000);

afterAll(() => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const extension of ['md', 'json', 'svg']) rmSync(path.join(projectRoot, 'bench/results', `${RESULT_NAME}.${extension}`), { force: true });
});

describe('npm run bench and npm run soak: --help', () => {
  it('prints every setting and starts nothing', { timeout: 60_000 }, async () => {
    const peersInstalled = existsSync(path.join(projectRoot, 'bench/peers/node_modules'));
    for (const [script, settings] of [
      ['bench', benchSettings],
      ['soak', soakSettings],
    ] as const) {
      const help = await npmRun(script, ['--help'], {}, 30_000);
      expect(help.code, help.stderr).toBe(0);
      for (const setting of settings) expect(help.stdout).toContain(setting.name);
      // Nothing of a run: no log line (`[bench  0 s] …`), no server, no database, no install.
      expect(help.stdout).not.toMatch(/^\[(bench|soak)\s/m);
      expect(help.stdout + help.stderr).not.toMatch(/started \S+ \(pid|created database \S+|bench\/peers is not installed/);
    }
    expect(existsSync(path.join(projectRoot, 'bench/peers/node_modules'))).toBe(peersInstalled);
    const unknown = await npmRun('bench', ['--no-such-option'], {}, 30_000);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('BENCH_DURATION');
  });
});

describe('npm run bench and npm run soak, interrupted', () => {
  it.runIf(replicationAvailable('the bench clean-up test of its replica pass'))(
    'bench: SIGTERM to npm during the replica pass stops both gateways and both PostgreSQL servers and removes their folder',
    { timeout: 180_000 },
    async () => {
      const bench = startRun('bench', { BENCH_PASSES: 'replicas', BENCH_DURATION: '30', BENCH_WARMUP: '30' });
      await bench.waitFor([/started gateway-primary-only/, /started gateway-with-replica/], 150_000);
      process.kill(bench.child.pid!, 'SIGTERM');
      await bench.exited;
      expect(bench.output()).toContain('SIGTERM: stopping what this run started');
      const made = madeBy(bench.output());
      expect(made.servers.map((server) => server.name)).toEqual(['gateway-primary-only', 'gateway-with-replica']);
      expect(made.folders).toHaveLength(1);
      expect(await settledLeftovers(bench)).toEqual(nothingLeft);
    },
  );

  it('soak: Ctrl-C (SIGINT to the process group) once both gateways run stops them, drops its database and removes the embedded DATA_DIR', {
    timeout: 180_000,
  }, async () => {
    const soak = startRun('soak', { SOAK_DURATION: '120', SOAK_SAMPLE_INTERVAL: '5' });
    await soak.waitFor([/started soak-server/, /started soak-embedded/], 150_000);
    process.kill(-soak.child.pid!, 'SIGINT');
    await soak.exited;
    expect(soak.output()).toContain('SIGINT: stopping what this run started');
    const made = madeBy(soak.output());
    expect(made.servers.map((server) => server.name).sort()).toEqual(['soak-embedded', 'soak-server']);
    expect(made.databases).toHaveLength(1);
    expect(made.folders).toHaveLength(1);
    expect(await settledLeftovers(soak)).toEqual(nothingLeft);
  });

  it('soak: SIGTERM to npm while it migrates and loads its database drops it all the same', { timeout: 120_000 }, async () => {
    const soak = startRun('soak', { SOAK_DURATION: '120', SOAK_DATABASES: 'server' });
    await soak.waitFor([/created database/], 90_000);
    process.kill(soak.child.pid!, 'SIGTERM');
    await soak.exited;
    expect(madeBy(soak.output()).databases).toHaveLength(1);
    expect(await settledLeftovers(soak)).toEqual(nothingLeft);
  });
});
