import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { run, stopAll } from '../support/processes.js';

afterAll(() => stopAll());

/** The ConfigError that loadConfig throws for `env`. */
function problemsWith(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('runs on the embedded database with no settings at all', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      databaseUrl: undefined,
      // The embedded database is migrated on start; PGlite runs one query at a time.
      migrateOnStart: true,
      databasePoolSize: 1,
      dataDir: path.resolve('.data'),
      logLevel: 'info',
      legacy: { sunsetDate: '2027-06-30', afterSunset: 'gone' },
    });
  });

  it('leaves a real server’s migrations to db:migrate unless asked, by setting or by --migrate', () => {
    const env = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/petstore' };
    expect(loadConfig(env)).toMatchObject({
      databaseUrl: env.DATABASE_URL,
      migrateOnStart: false,
      databasePoolSize: 10,
    });
    expect(loadConfig({ ...env, MIGRATE_ON_START: 'true' }).migrateOnStart).toBe(true);
    expect(loadConfig(env, ['--migrate']).migrateOnStart).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'postgres://db.internal/petstore' }).databaseUrl).toBe(
      'postgres://db.internal/petstore',
    );
  });

  it('reads PORT, HOST, DATA_DIR, LOG_LEVEL and LEGACY_SUNSET_DATE, and takes an empty value as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/petstore-data',
      LOG_LEVEL: 'debug',
      LEGACY_SUNSET_DATE: '2028-01-31',
      DATABASE_URL: '',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/tmp/petstore-data',
      logLevel: 'debug',
      legacy: { sunsetDate: '2028-01-31', afterSunset: 'gone' },
      databaseUrl: undefined,
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT must be a whole number from 0 to 65535'],
    [{ PORT: '80.5' }, 'PORT must be a whole number from 0 to 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a PostgreSQL connection URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ LEGACY_SUNSET_DATE: '2027-13-45' }, 'LEGACY_SUNSET_DATE must be a real calendar date (YYYY-MM-DD)'],
    [{ LEGACY_SUNSET_DATE: '30/06/2027' }, 'LEGACY_SUNSET_DATE must be a date written YYYY-MM-DD'],
    [{ MIGRATE_ON_START: 'yes' }, 'MIGRATE_ON_START must be true or false'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be a whole number from 1 to 100'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be development, test or production'],
  ])('refuses %j, naming the setting and what it accepts', (env, message) => {
    const error = problemsWith(env);
    const [setting] = Object.keys(env) as [string];
    expect(error.problems).toContainEqual(expect.stringContaining(message));
    for (const problem of error.problems) expect(problem.startsWith(`${setting} `), problem).toBe(true);
    expect(error.message).toContain(message);
  });

  it('names every bad setting at once, one line each', () => {
    const error = problemsWith({
      PORT: 'abc',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
      LEGACY_SUNSET_DATE: '2027-13-45',
    });
    expect(error.problems).toHaveLength(4);
    for (const setting of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'LEGACY_SUNSET_DATE']) {
      expect(error.problems.filter((problem) => problem.startsWith(`${setting} `))).toHaveLength(1);
    }
    expect(error.message.split('\n')).toEqual(['Invalid configuration:', ...error.problems.map((p) => `  - ${p}`)]);
  });
});

describe('a bad setting at start-up', () => {
  it('stops `tsx src/main.ts` with a non-zero exit and the message on stderr', async () => {
    const result = await run('npx', ['tsx', 'src/main.ts'], { PORT: 'abc' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toContain('PORT must be a whole number from 0 to 65535');
    // A message for the operator, not a stack trace; and nothing started.
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).not.toContain('ready at');
  });

  it('lists every bad setting on stderr', async () => {
    const result = await run('npx', ['tsx', 'src/main.ts'], {
      PORT: 'abc',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
      LEGACY_SUNSET_DATE: '2027-13-45',
    });
    expect(result.code).toBe(1);
    for (const setting of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'LEGACY_SUNSET_DATE']) {
      expect(result.stderr).toContain(`  - ${setting} must`);
    }
  });
});
