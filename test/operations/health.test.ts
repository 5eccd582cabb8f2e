import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase } from '../support/database.js';
import { cleanUp, emptyDatabase, forgetDatabase, migratedDatabase, startProcess } from '../support/operations.js';
import { TEST_JWT_SECRET } from '../support/tokens.js';
import { commandEnv, freePort, type GatewayProcess, projectRoot, run, stopAll } from '../support/processes.js';

/**
 * Liveness and readiness of the real server process: /healthz answers while
 * the process runs; /readyz only while the database answers and every
 * migration is applied, with the reason when not.
 */

const folders: string[] = [];

afterAll(async () => {
  stopAll();
  await cleanUp();
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function probe(gateway: GatewayProcess, endpoint: '/healthz' | '/readyz') {
  const response = await fetch(`${gateway.baseUrl}${endpoint}`);
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}

describe('/healthz and /readyz', () => {
  it('on a migrated database: both 200, without a token', { timeout: 60_000 }, async () => {
    const database = await migratedDatabase();
    const gateway = await startProcess(database.url);
    expect(await probe(gateway, '/healthz')).toEqual({ status: 200, type: 'application/json', body: { status: 'ok' } });
    expect(await probe(gateway, '/readyz')).toEqual({ status: 200, type: 'application/json', body: { status: 'ready' } });
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });

  it('on a fresh database that was never migrated (no MIGRATE_ON_START): alive, but 503 naming db:migrate', {
    timeout: 60_000,
  }, async () => {
    const database = await emptyDatabase();
    const gateway = await startProcess(database.url);
    expect((await probe(gateway, '/healthz')).status).toBe(200);
    const readiness = await probe(gateway, '/readyz');
    expect(readiness.status).toBe(503);
    expect(readiness.body).toEqual({
      status: 'not ready',
      reason: 'The database has no migrations applied: run npm run db:migrate.',
    });
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });

    // The same database once migrated on start: ready.
    const migrating = await startProcess(database.url, { MIGRATE_ON_START: 'true' });
    expect((await probe(migrating, '/readyz')).status).toBe(200);
    expect(await migrating.stop()).toEqual({ code: 0, signal: null });
  });

  it('when a migration in prisma/migrations is not applied: 503 naming it', { timeout: 60_000 }, async () => {
    const database = await migratedDatabase();
    const [newest] = await database.prisma.$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1`;
    // As if the newest migration had been added to the code after the database was last migrated.
    await database.prisma.$executeRaw`DELETE FROM _prisma_migrations WHERE migration_name = ${newest!.migration_name}`;
    const gateway = await startProcess(database.url);
    const readiness = await probe(gateway, '/readyz');
    expect(readiness.status).toBe(503);
    expect(readiness.body.reason).toBe(
      `Migrations not applied yet: ${newest!.migration_name}. Run npm run db:migrate.`,
    );
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });

  it('when the database goes away, or was never there: 503 while /healthz stays 200', { timeout: 60_000 }, async () => {
    const database = await migratedDatabase();
    const gateway = await startProcess(database.url);
    expect((await probe(gateway, '/readyz')).status).toBe(200);
    await database.prisma.$disconnect();
    await dropDatabase(database.name);
    forgetDatabase(database.name);
    const gone = await probe(gateway, '/readyz');
    expect(gone).toEqual({
      status: 503,
      type: 'application/json',
      body: { status: 'not ready', reason: 'The database does not answer.' },
    });
    expect((await probe(gateway, '/healthz')).status).toBe(200);
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });

    // A server nobody listens on.
    const nowhere = await startProcess(`postgresql://postgres@127.0.0.1:${await freePort()}/petstore`);
    expect(await probe(nowhere, '/readyz')).toMatchObject({ status: 503, body: { reason: 'The database does not answer.' } });
    expect((await probe(nowhere, '/healthz')).status).toBe(200);
    expect(await nowhere.stop()).toEqual({ code: 0, signal: null });
  });

  it('the built server (npm run build, node dist/src/main.js, as the Dockerfile runs it) finds its migrations too', {
    timeout: 180_000,
  }, async () => {
    // Built into a folder of its own inside the project, so it resolves node_modules and prisma/ as dist/ would.
    const outDir = path.join(projectRoot, `.build-test-${randomBytes(4).toString('hex')}`);
    folders.push(outDir);
    const built = await run('node_modules/.bin/tsc', ['-p', 'tsconfig.build.json', '--outDir', outDir], {}, 150_000);
    expect(built.code, built.stdout + built.stderr).toBe(0);

    // A database one migration behind the code: only a server that finds prisma/migrations can tell.
    const behind = await migratedDatabase();
    const [newest] = await behind.prisma.$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1`;
    await behind.prisma.$executeRaw`DELETE FROM _prisma_migrations WHERE migration_name = ${newest!.migration_name}`;
    const server = spawn(process.execPath, [path.join(outDir, 'src/main.js')], {
      cwd: projectRoot,
      env: commandEnv({
        DATABASE_URL: behind.url,
        HOST: '127.0.0.1',
        PORT: '0',
        NODE_ENV: 'production',
        AUTH_JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line:\n${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const ready = /ready at (http:\/\/\S+)\/graphql/.exec(output);
        if (ready) {
          clearTimeout(timer);
          resolve(ready[1]!);
        }
      };
      server.stdout.on('data', onData);
      server.stderr.on('data', onData);
      void exited.then(() => reject(new Error(`the built server exited:\n${output}`)));
    });
    try {
      const readiness = await fetch(`${url}/readyz`);
      expect(readiness.status).toBe(503);
      expect(await readiness.json()).toEqual({
        status: 'not ready',
        reason: `Migrations not applied yet: ${newest!.migration_name}. Run npm run db:migrate.`,
      });
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
