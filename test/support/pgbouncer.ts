import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { adminUrl } from './database.js';
import { freePort } from './processes.js';

/**
 * A PgBouncer (Debian's pgbouncer package) in transaction pooling mode in front of the test
 * PostgreSQL server, on a free port, in a folder of its own. It refuses to run as root, so it runs as
 * the postgres user when the tests run as root. CI installs it (.ci/run): there a missing binary is a
 * failure; elsewhere the test is skipped with a line saying how to install it.
 */
export const PGBOUNCER = '/usr/sbin/pgbouncer';

export function pgbouncerAvailable(test: string): boolean {
  const found = existsSync(PGBOUNCER);
  if (!found && process.env.CI) throw new Error(`${PGBOUNCER} is missing in CI: .ci/run should have installed Debian's pgbouncer.`);
  if (!found) console.warn(`SKIPPED ${test}: ${PGBOUNCER} is missing. Install it with \`apt-get install -y pgbouncer\`.`);
  return found;
}

export interface PgBouncer {
  /** The URL of `database` through the pooler. */
  urlOf(database: string): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(): Promise<PgBouncer> {
  const server = new URL(adminUrl);
  const dir = await mkdtemp(path.join(tmpdir(), 'petstore-pgbouncer-'));
  const port = await freePort();
  await writeFile(path.join(dir, 'users.txt'), `"${server.username || 'postgres'}" ""\n`);
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'unix_socket_dir =',
      'default_pool_size = 10',
    ].join('\n'),
  );
  await chmod(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, path.join(dir, 'pgbouncer.ini')], { stdio: 'pipe' })
    : spawn(PGBOUNCER, [path.join(dir, 'pgbouncer.ini')], { stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const urlOf = (database: string) => {
    const url = new URL(adminUrl);
    url.port = String(port);
    url.pathname = `/${database}`;
    return url.toString();
  };
  // Ready once it answers a query.
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: urlOf(server.pathname.slice(1) || 'postgres') });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (attempt >= 50 || child.exitCode !== null) throw new Error(`PgBouncer did not start: ${String(error)}\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    urlOf,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
