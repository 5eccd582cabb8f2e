import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, inject } from 'vitest';
import { createTokenVerifier, type TokenKeys } from '../../src/auth/tokens.js';
import { type GatewaySettings, type Limits, type LiveQuerySettings, loadConfig, type ResponseCacheSettings, type TrustProxy } from '../../src/config.js';
import { createPrismaClient, type PrismaClient } from '../../src/database/client.js';
import { startEmbeddedPostgres } from '../../src/database/embedded.js';
import type { LegacyAfterSunset } from '../../src/legacy.js';
import { createEventBus } from '../../src/events/bus.js';
import { createLogger } from '../../src/logger.js';
import { currentTraceIds } from '../../src/observability/tracing/spans.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { TrustedDocumentsOptions } from '../../src/http/plugins/use-trusted-documents.js';
import { createGateway } from '../../src/server.js';
import { createMigratedDatabase, dropDatabase } from './database.js';
import { type Differential, withDifferential } from './differential.js';
import { bearer, type GraphQLAnswer, postGraphQL } from './http.js';
import { testSecret, testToken } from './tokens.js';

export interface TestGateway {
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  databaseUrl: string;
  /** A Prisma client on the same database, for arranging data and checking what was written. */
  prisma: PrismaClient;
  /** SQL statements the gateway's Prisma client has run since the last reset. */
  statements: string[];
  /** Sends a GraphQL request, by default with a token that has every scope. */
  graphql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    options?: RequestOptions,
  ): Promise<GraphQLAnswer<T>>;
  /** Headers that authenticate with every scope, for hand-made requests. */
  authorization(): Promise<Record<string, string>>;
  /**
   * The queries this gateway answered that a reference gateway without query plans answered
   * differently (none, or the file fails), and how many were compared (test/support/differential.ts).
   */
  differential: Differential;
  /** How many operations each engine has executed (petstore_graphql_executions_total). */
  executions(engine: 'plan' | 'graphql-js'): Promise<number>;
}

export interface GatewayTestOptions {
  legacySunsetDate?: string;
  legacyAfterSunset?: LegacyAfterSunset;
  /** Overrides of the default limits (rate limit, body size, query limits...). */
  limits?: Partial<Limits>;
  introspection?: boolean;
  statementTimeoutMs?: number;
  /** Events (and shared rate limits) through this Redis; in process when absent. */
  redisUrl?: string;
  /** Before every event channel name; unique to this gateway unless given, as test files share one Redis. */
  channelPrefix?: string;
  /** Origins allowed by CORS (none by default). */
  corsOrigins?: string[];
  /** Serve GraphiQL (on by default, as in development). */
  graphiql?: boolean;
  /**
   * How tokens are verified; by default HS256 with `testSecret`. A function is
   * called when the gateway starts (e.g. once a local JWKS server listens).
   */
  tokenKeys?: TokenKeys | (() => TokenKeys);
  /** Live queries' pace and limits (the defaults unless given; false: @live answered once). */
  liveQueries?: Partial<LiveQuerySettings> | false;
  /** Serve queries from a response cache (off by default, as in production). */
  responseCache?: ResponseCacheSettings;
  /** Which proxies may name the client (TRUST_PROXY); none by default. */
  trustProxy?: TrustProxy;
  /** Which documents are run (TRUSTED_DOCUMENTS); any by default. */
  trustedDocuments?: TrustedDocumentsOptions;
  /**
   * Query plans (GRAPHQL_QUERY_PLANS), on by default as in production. While on (and the response
   * cache off), every query is answered by a reference gateway without plans too and the two answers
   * compared: a difference fails the file (test/support/differential.ts).
   */
  queryPlans?: boolean;
  /** Whether plans read lists with the gateway's own statements (GRAPHQL_PLAN_STATEMENTS); on by default. */
  planStatements?: boolean;
  /** Serve the schema as a Federation v2 subgraph (FEDERATION); the standalone schema by default. */
  federation?: boolean;
  /**
   * A second gateway instance on the database of `gateway` (made earlier in the file) instead of a
   * database of its own, as two instances behind a load balancer share one.
   */
  sameDatabaseAs?: TestGateway;
}

/** Each test gateway's database, for a second instance on it. */
const databases = new WeakMap<TestGateway, TestDatabase>();

export interface RequestOptions {
  /** A bearer token; by default one with every scope. `null` sends the request anonymously. */
  token?: string | null;
  headers?: Record<string, string>;
}

/**
 * Gives the test file its own migrated database and a gateway serving it over
 * real HTTP on a free port, both gone after the file's tests.
 */
export function useTestGateway(options: GatewayTestOptions = {}): TestGateway {
  const gateway = { statements: [] as string[], differential: { checks: 0, mismatches: [] } as Differential } as TestGateway;
  let stop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const shared = options.sameDatabaseAs && databases.get(options.sameDatabaseAs);
    if (options.sameDatabaseAs && !shared) throw new Error('sameDatabaseAs: that gateway has not started yet.');
    const database = shared || (await testDatabase());
    databases.set(gateway, database);
    const gatewayPrisma = createPrismaClient({
      url: database.gatewayUrl,
      // The embedded database gets what `npm start` gives it with no settings: one connection.
      poolSize: database.embedded ? loadConfig({}).databasePoolSize : 10,
      logQueries: true,
      onStatement: (sql) => gateway.statements.push(sql),
      statementTimeoutMs: options.statementTimeoutMs,
      // Through PgBouncer (TEST_THROUGH_PGBOUNCER=1) as DATABASE_POOLER=pgbouncer configures it: no prepared statements.
      ...(database.throughBouncer ? { preparedStatements: 0 } : {}),
    });
    gatewayPrisma.$on('query', (event) => gateway.statements.push(event.query));
    const prisma = createPrismaClient({ url: database.url, poolSize: 4 });
    const settings = testSettings(options);
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', { traceIds: currentTraceIds });
    const verifyToken = createTokenVerifier(
      typeof options.tokenKeys === 'function' ? options.tokenKeys() : (options.tokenKeys ?? { kind: 'hs256', secret: testSecret }),
    );
    const events = createEventBus(options.redisUrl, {
      channelPrefix: options.channelPrefix ?? `test:${randomUUID()}:`,
    });
    const metrics = createMetrics();
    const gatewayParts = createGateway({ prisma: gatewayPrisma, events, metrics, logger, verifyToken, settings });
    // The reference: graphql-js alone, on a client of its own (the file's statement counts stay the
    // gateway's), with nothing kept between requests that the gateway's writes would have to outdate.
    const compared = settings.queryPlans !== undefined && settings.responseCache === undefined;
    const referencePrisma = compared
      ? createPrismaClient({
          url: database.gatewayUrl,
          poolSize: 4,
          statementTimeoutMs: options.statementTimeoutMs,
          ...(database.throughBouncer ? { preparedStatements: 0 } : {}),
        })
      : undefined;
    const referenceEvents = compared ? createEventBus(undefined, { channelPrefix: `test:${randomUUID()}:` }) : undefined;
    const reference =
      referencePrisma && referenceEvents
        ? createGateway({
            prisma: referencePrisma,
            events: referenceEvents,
            metrics: createMetrics(),
            logger,
            verifyToken,
            settings: { ...settings, queryPlans: undefined },
          })
        : undefined;
    const fetch = reference ? withDifferential(gatewayParts.app.fetch, reference.app.fetch, gateway.differential) : gatewayParts.app.fetch;
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const listening = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(listening));
    });
    const webSockets = gatewayParts.serveWebSockets(server as Server);
    const { port } = server.address() as AddressInfo;
    Object.assign(gateway, {
      baseUrl: `http://127.0.0.1:${port}`,
      databaseUrl: database.url,
      prisma,
      async authorization() {
        return { authorization: `Bearer ${await testToken()}` };
      },
      executions: (engine: 'plan' | 'graphql-js') => executionCount(metrics, engine),
      async graphql(query: string, variables?: Record<string, unknown>, request: RequestOptions = {}) {
        const token = request.token === undefined ? await testToken() : request.token;
        const answer = await postGraphQL(gateway.baseUrl, { query, variables }, { ...(token ? bearer(token) : {}), ...request.headers });
        return answer.body;
      },
    });
    stop = async () => {
      await events.close();
      await webSockets.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gatewayPrisma.$disconnect();
      await prisma.$disconnect();
      await referenceEvents?.close();
      await referencePrisma?.$disconnect();
      // The gateway whose database it is drops it (vitest runs afterAll hooks last-registered first).
      if (!shared) await database.drop();
    };
  });

  afterAll(async () => {
    await stop();
    // The differential check of the two engines, over every query this file sent.
    if (gateway.differential.mismatches.length > 0) {
      throw new Error(`The gateway with query plans answered differently from graphql-js alone:\n${JSON.stringify(gateway.differential.mismatches, null, 2)}`);
    }
  });
  return gateway;
}

/** The gateway's settings as npm start has them by default, with what the test asks for. */
function testSettings(options: GatewayTestOptions): GatewaySettings {
  const defaults = loadConfig({});
  return {
    ...defaults,
    // Tests send many requests from one address; only rate-limit tests ask for a real limit.
    limits: {
      ...defaults.limits,
      rateLimit: { requests: 1_000_000, windowSeconds: 60 },
      costBudget: { capacity: 100_000_000, refillPerSecond: 1_000_000, onRedisFailure: 'local' },
      ...options.limits,
    },
    introspection: options.introspection ?? true,
    corsOrigins: options.corsOrigins ?? [],
    graphiql: options.graphiql ?? true,
    legacy: {
      ...defaults.legacy,
      sunsetDate: options.legacySunsetDate ?? defaults.legacy.sunsetDate,
      afterSunset: options.legacyAfterSunset ?? defaults.legacy.afterSunset,
    },
    responseCache: options.responseCache,
    liveQueries: options.liveQueries === false ? undefined : { ...defaults.liveQueries!, ...options.liveQueries },
    trustProxy: options.trustProxy ?? false,
    trustedDocuments: options.trustedDocuments
      ? { mode: options.trustedDocuments.mode, documents: options.trustedDocuments.documents }
      : { mode: 'off', documents: new Map() },
    persistedQueries: options.trustedDocuments?.registered ?? defaults.persistedQueries,
    queryPlans: options.queryPlans === false ? undefined : { ...defaults.queryPlans!, ownStatements: options.planStatements ?? true },
    federation: options.federation ?? false,
  };
}

async function executionCount(metrics: Metrics, engine: 'plan' | 'graphql-js'): Promise<number> {
  const { values } = await metrics.executions.get();
  return values.find((value) => value.labels.engine === engine)?.value ?? 0;
}

interface TestDatabase {
  /** Where the gateway connects: through PgBouncer in that pass. */
  gatewayUrl: string;
  /** Straight to the database, for arranging and checking. */
  url: string;
  embedded: boolean;
  throughBouncer: boolean;
  drop(): Promise<void>;
}

/**
 * The file's own database: a copy of the migrated template on the PostgreSQL server (reached
 * through PgBouncer in that pass), or, with TEST_ON_EMBEDDED=1, a copy of a migrated embedded
 * database served as `npm start` serves it.
 */
async function testDatabase(): Promise<TestDatabase> {
  const embeddedTemplate = inject('embeddedTemplate');
  if (embeddedTemplate) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-embedded-'));
    await cp(embeddedTemplate, dataDir, { recursive: true });
    const embedded = await startEmbeddedPostgres(dataDir, { idleTimeoutMs: loadConfig({}).embeddedIdleTimeoutMs });
    return {
      gatewayUrl: embedded.url,
      url: embedded.url,
      embedded: true,
      throughBouncer: false,
      async drop() {
        await embedded.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const database = await createMigratedDatabase(inject('templateDatabase'));
  const bouncerPort = inject('pgbouncerPort');
  const gatewayUrl = new URL(database.url);
  if (bouncerPort) gatewayUrl.port = String(bouncerPort);
  return {
    gatewayUrl: gatewayUrl.toString(),
    url: database.url,
    embedded: false,
    throughBouncer: Boolean(bouncerPort),
    drop: () => dropDatabase(database.name),
  };
}
