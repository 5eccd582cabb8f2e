import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, defaultLimits, loadConfig } from '../../src/config.js';
import { run, stopAll } from '../support/processes.js';

/**
 * The settings as src/config.ts reads them from the environment: their
 * defaults, what each accepts, and a refusal naming every setting that cannot
 * work; the security settings (keys, limits, lists, production defaults) as
 * well; and what a bad setting does to `tsx src/main.ts` at start-up.
 */

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

  it('prepares 500 statements per connection, none behind PgBouncer unless told', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(500);
    expect(loadConfig({ DATABASE_POOLER: 'pgbouncer' })).toMatchObject({ databasePooler: 'pgbouncer', databasePreparedStatements: 0 });
    expect(loadConfig({ DATABASE_POOLER: 'pgbouncer', DATABASE_PREPARED_STATEMENTS: '200' }).databasePreparedStatements).toBe(200);
  });

  it('reads on the replicas listed, checked every second and out of rotation 5 s behind unless told', () => {
    expect(loadConfig({}).databaseReplicas).toEqual({ urls: [], maxLagMs: 5_000, checkIntervalMs: 1_000 });
    const env = {
      DATABASE_URL: 'postgresql://postgres@primary:5432/petstore',
      DATABASE_REPLICA_URLS: 'postgresql://postgres@r1:5432/petstore, postgresql://postgres@r2:5432/petstore',
      DATABASE_REPLICA_MAX_LAG_MS: '2000',
    };
    expect(loadConfig(env).databaseReplicas).toEqual({
      urls: ['postgresql://postgres@r1:5432/petstore', 'postgresql://postgres@r2:5432/petstore'],
      maxLagMs: 2_000,
      checkIntervalMs: 1_000,
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
    [{ DATABASE_PREPARED_STATEMENTS: '-1' }, 'DATABASE_PREPARED_STATEMENTS must be a whole number from 0 to 10000'],
    [{ DATABASE_POOLER: 'pgpool' }, 'DATABASE_POOLER must be none or pgbouncer'],
    [{ DATABASE_REPLICA_URLS: 'postgresql://r1/petstore, mysql://r2/petstore', DATABASE_URL: 'postgresql://db/petstore' }, 'DATABASE_REPLICA_URLS must be a comma-separated list of PostgreSQL connection URLs'],
    [{ DATABASE_REPLICA_URLS: 'postgresql://r1/petstore' }, 'DATABASE_REPLICA_URLS needs DATABASE_URL'],
    [{ DATABASE_REPLICA_MAX_LAG_MS: '-5' }, 'DATABASE_REPLICA_MAX_LAG_MS must be a whole number from 0 to 3600000'],
    [{ DATABASE_REPLICA_CHECK_INTERVAL_MS: '10' }, 'DATABASE_REPLICA_CHECK_INTERVAL_MS must be a whole number from 100 to 60000'],
    [{ DATABASE_IDLE_TIMEOUT_MS: '-1' }, 'DATABASE_IDLE_TIMEOUT_MS must be a whole number from 0 to 86400000'],
    [{ EMBEDDED_DATABASE_IDLE_TIMEOUT_MS: 'soon' }, 'EMBEDDED_DATABASE_IDLE_TIMEOUT_MS must be a whole number from 0 to 86400000'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '1.5' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be a whole number from 0 to 3600000'],
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

/** The problems loadConfig names for `env`, one line each. */
function problemLinesWith(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

const secret = 'x'.repeat(32);

describe('security settings', () => {
  it('have the documented defaults', () => {
    expect(defaultLimits).toEqual({
      bodyBytes: 102_400,
      requestTimeoutMs: 10_000,
      statementTimeoutMs: 5_000,
      // The client waits 2 s longer than the server's own statement timeout before giving a connection up.
      database: { connectTimeoutMs: 5_000, queryTimeoutMs: 7_000, maxWaiting: 50, idleTimeoutMs: 10_000 },
      rateLimit: { requests: 600, windowSeconds: 60, keyPrefix: 'petstore-rate' },
      maxDepth: 12,
      maxAliases: 20,
      maxTokens: 2_000,
      maxCost: 5_000,
      costBudget: { capacity: 10_000, refillPerSecond: 100, onRedisFailure: 'local' },
      unsizedList: 20,
      costEstimates: 10_000,
      maxDirectives: 50,
      maxBatch: 10,
    });
    expect(loadConfig({})).toMatchObject({
      auth: { kind: 'development' },
      introspection: true,
      graphiql: true,
      corsOrigins: [],
      redisUrl: undefined,
    });
  });

  it('turn introspection and GraphiQL off in production, unless asked', () => {
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret })).toMatchObject({
      introspection: false,
      graphiql: false,
      auth: { kind: 'hs256', secret },
    });
    expect(
      loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret, INTROSPECTION: 'true', GRAPHIQL: '1' }),
    ).toMatchObject({ introspection: true, graphiql: true });
    expect(loadConfig({ INTROSPECTION: 'false' }).introspection).toBe(false);
  });

  it('serve the standalone schema unless FEDERATION makes the gateway a subgraph, in production too', () => {
    expect(loadConfig({}).federation).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret }).federation).toBe(false);
    expect(loadConfig({ FEDERATION: 'true' }).federation).toBe(true);
    // A router's subgraph operations are its own, in no manifest.
    expect(() => loadConfig({ FEDERATION: 'true', TRUSTED_DOCUMENTS: 'require', TRUSTED_DOCUMENTS_MANIFESTS: 'test/generated/persisted-documents.json' })).toThrow(
      /FEDERATION=true cannot be combined with TRUSTED_DOCUMENTS=require/,
    );
  });

  it('read every limit and the lists', () => {
    const config = loadConfig({
      BODY_LIMIT_BYTES: '2048',
      REQUEST_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
      DATABASE_CONNECT_TIMEOUT_MS: '800',
      DATABASE_QUERY_TIMEOUT_MS: '1200',
      DATABASE_MAX_WAITING: '3',
      DATABASE_IDLE_TIMEOUT_MS: '0',
      RATE_LIMIT_REQUESTS: '5',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      RATE_LIMIT_KEY_PREFIX: 'petstore-rate:staging',
      MAX_DEPTH: '3',
      MAX_ALIASES: '4',
      MAX_TOKENS: '50',
      MAX_COST: '60',
      MAX_DIRECTIVES: '7',
      MAX_BATCH: '1',
      CORS_ORIGINS: 'https://shop.example, https://admin.shop.example',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(config.limits).toEqual({
      bodyBytes: 2048,
      requestTimeoutMs: 1500,
      statementTimeoutMs: 1000,
      database: { connectTimeoutMs: 800, queryTimeoutMs: 1200, maxWaiting: 3, idleTimeoutMs: 0 },
      rateLimit: { requests: 5, windowSeconds: 10, keyPrefix: 'petstore-rate:staging' },
      maxDepth: 3,
      maxAliases: 4,
      maxTokens: 50,
      maxCost: 60,
      costBudget: { capacity: 10_000, refillPerSecond: 100, onRedisFailure: 'local' },
      unsizedList: 20,
      costEstimates: 10_000,
      maxDirectives: 7,
      maxBatch: 1,
    });
    expect(config.corsOrigins).toEqual(['https://shop.example', 'https://admin.shop.example']);
    // Written as a URL, an origin is still the origin a browser sends.
    expect(loadConfig({ CORS_ORIGINS: 'https://Shop.Example/, http://127.0.0.1:3000/app' }).corsOrigins).toEqual([
      'https://shop.example',
      'http://127.0.0.1:3000',
    ]);
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
  });

  it('refuse keys that cannot work, naming what is needed', () => {
    expect(problemLinesWith({ NODE_ENV: 'production' })).toEqual([
      'In production AUTH_JWT_SECRET or AUTH_JWKS_URL must be set: the gateway does not make its own key there',
    ]);
    expect(problemLinesWith({ AUTH_JWT_SECRET: 'short' })).toEqual([
      'AUTH_JWT_SECRET must be at least 32 characters (the HS256 shared secret)',
    ]);
    expect(problemLinesWith({ AUTH_JWT_SECRET: secret, AUTH_JWKS_URL: 'https://id.example/jwks.json' })).toEqual([
      'Set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both',
    ]);
    expect(problemLinesWith({ AUTH_JWKS_URL: 'https://id.example/jwks.json', AUTH_ISSUER: 'https://id.example/' })).toEqual(
      ['AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE (the tokens your provider issues)'],
    );
    expect(problemLinesWith({ AUTH_JWKS_URL: 'ftp://id.example/jwks.json' })).toEqual([
      'AUTH_JWKS_URL must be an http(s) URL',
    ]);
  });

  it('refuse limits out of range and lists that are not origins', () => {
    expect(problemLinesWith({ MAX_DEPTH: '0', BODY_LIMIT_BYTES: '10', RATE_LIMIT_REQUESTS: 'many' })).toEqual([
      'RATE_LIMIT_REQUESTS must be a whole number from 1 to 1000000',
      'BODY_LIMIT_BYTES must be a whole number from 1024 to 10485760',
      'MAX_DEPTH must be a whole number from 1 to 100',
    ]);
    for (const origins of ['shop.example', 'shop.example:8080', 'ftp://shop.example', 'https://shop.example,nope']) {
      expect(problemLinesWith({ CORS_ORIGINS: origins })).toEqual([
        'CORS_ORIGINS must be a comma-separated list of origins (https://shop.example) or *',
      ]);
    }
    expect(problemLinesWith({ REDIS_URL: 'localhost:6379' })).toEqual(['REDIS_URL must be a Redis URL (redis://host:6379)']);
    expect(problemLinesWith({ INTROSPECTION: 'maybe' })).toEqual(['INTROSPECTION must be true or false']);
    expect(problemLinesWith({ FEDERATION: 'v2' })).toEqual(['FEDERATION must be true or false']);
    expect(problemLinesWith({ RATE_LIMIT_KEY_PREFIX: 'has spaces' })).toEqual([
      'RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters, digits, and . : _ - (e.g. petstore-rate:staging)',
    ]);
    expect(problemLinesWith({ RESPONSE_CACHE_TTL_MS: '5s', RESPONSE_CACHE_MAX_ENTRIES: '0' })).toEqual([
      'RESPONSE_CACHE_TTL_MS must be a whole number from 0 to 3600000',
      'RESPONSE_CACHE_MAX_ENTRIES must be a whole number from 1 to 1000000',
    ]);
    expect(problemLinesWith({ RESPONSE_CACHE_MAX_BYTES: '10' })).toEqual([
      'RESPONSE_CACHE_MAX_BYTES must be a whole number from 1000000 to 8000000000',
    ]);
  });

  it('leave the response cache off unless RESPONSE_CACHE_TTL_MS is above 0', () => {
    expect(loadConfig({}).responseCache).toBeUndefined();
    expect(loadConfig({ RESPONSE_CACHE_TTL_MS: '0' }).responseCache).toBeUndefined();
    expect(loadConfig({ RESPONSE_CACHE_TTL_MS: '5000', EVENTS_CHANNEL_PREFIX: 'shop:' }).responseCache).toEqual({
      ttlMs: 5000,
      maxEntries: 10_000,
      maxBytes: 64_000_000,
      keyPrefix: 'shop:response-cache:',
    });
    expect(loadConfig({ RESPONSE_CACHE_TTL_MS: '5000', RESPONSE_CACHE_MAX_BYTES: '2000000' }).responseCache?.maxBytes).toBe(2_000_000);
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
