import { describe, expect, it } from 'vitest';
import { ConfigError, defaultLimits, loadConfig } from '../../src/config.js';

/**
 * The security settings as src/config.ts reads them: their defaults, the
 * production defaults, and the refusals of settings that cannot work.
 */

function problemsWith(env: Record<string, string>): string[] {
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
      rateLimit: { requests: 600, windowSeconds: 60, keyPrefix: 'petstore-rate' },
      maxDepth: 12,
      maxAliases: 20,
      maxTokens: 2_000,
      maxCost: 50_000,
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

  it('read every limit and the lists', () => {
    const config = loadConfig({
      BODY_LIMIT_BYTES: '2048',
      REQUEST_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
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
      rateLimit: { requests: 5, windowSeconds: 10, keyPrefix: 'petstore-rate:staging' },
      maxDepth: 3,
      maxAliases: 4,
      maxTokens: 50,
      maxCost: 60,
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
    expect(problemsWith({ NODE_ENV: 'production' })).toEqual([
      'In production AUTH_JWT_SECRET or AUTH_JWKS_URL must be set: the gateway does not make its own key there',
    ]);
    expect(problemsWith({ AUTH_JWT_SECRET: 'short' })).toEqual([
      'AUTH_JWT_SECRET must be at least 32 characters (the HS256 shared secret)',
    ]);
    expect(problemsWith({ AUTH_JWT_SECRET: secret, AUTH_JWKS_URL: 'https://id.example/jwks.json' })).toEqual([
      'Set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both',
    ]);
    expect(problemsWith({ AUTH_JWKS_URL: 'https://id.example/jwks.json', AUTH_ISSUER: 'https://id.example/' })).toEqual(
      ['AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE (the tokens your provider issues)'],
    );
    expect(problemsWith({ AUTH_JWKS_URL: 'ftp://id.example/jwks.json' })).toEqual([
      'AUTH_JWKS_URL must be an http(s) URL',
    ]);
  });

  it('refuse limits out of range and lists that are not origins', () => {
    expect(problemsWith({ MAX_DEPTH: '0', BODY_LIMIT_BYTES: '10', RATE_LIMIT_REQUESTS: 'many' })).toEqual([
      'RATE_LIMIT_REQUESTS must be a whole number from 1 to 1000000',
      'BODY_LIMIT_BYTES must be a whole number from 1024 to 10485760',
      'MAX_DEPTH must be a whole number from 1 to 100',
    ]);
    for (const origins of ['shop.example', 'shop.example:8080', 'ftp://shop.example', 'https://shop.example,nope']) {
      expect(problemsWith({ CORS_ORIGINS: origins })).toEqual([
        'CORS_ORIGINS must be a comma-separated list of origins (https://shop.example) or *',
      ]);
    }
    expect(problemsWith({ REDIS_URL: 'localhost:6379' })).toEqual(['REDIS_URL must be a Redis URL (redis://host:6379)']);
    expect(problemsWith({ INTROSPECTION: 'maybe' })).toEqual(['INTROSPECTION must be true or false']);
    expect(problemsWith({ RATE_LIMIT_KEY_PREFIX: 'has spaces' })).toEqual([
      'RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters, digits, and . : _ - (e.g. petstore-rate:staging)',
    ]);
    expect(problemsWith({ RESPONSE_CACHE_TTL_MS: '5s', RESPONSE_CACHE_MAX_ENTRIES: '0' })).toEqual([
      'RESPONSE_CACHE_TTL_MS must be a whole number from 0 to 3600000',
      'RESPONSE_CACHE_MAX_ENTRIES must be a whole number from 1 to 1000000',
    ]);
  });

  it('leave the response cache off unless RESPONSE_CACHE_TTL_MS is above 0', () => {
    expect(loadConfig({}).responseCache).toBeUndefined();
    expect(loadConfig({ RESPONSE_CACHE_TTL_MS: '0' }).responseCache).toBeUndefined();
    expect(loadConfig({ RESPONSE_CACHE_TTL_MS: '5000', EVENTS_CHANNEL_PREFIX: 'shop:' }).responseCache).toEqual({
      ttlMs: 5000,
      maxEntries: 1000,
      generationKey: 'shop:response-cache-generation',
    });
  });
});
