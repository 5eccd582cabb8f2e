import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { z } from 'zod';
import {
  DEFAULT_LEGACY_AFTER_SUNSET,
  DEFAULT_LEGACY_SUNSET_DATE,
  legacyAfterSunsetChoices,
  type LegacySettings,
  parseBrownouts,
} from './legacy.js';

/** Time bounds of every call to PostgreSQL (src/database/client.ts); each is a setting. */
export interface DatabaseTimeouts {
  /** Connecting, and waiting for a pooled connection (pg's connectionTimeoutMillis bounds both). */
  connectTimeoutMs: number;
  /** How long the client waits for the answer to one statement before it gives the connection up. */
  queryTimeoutMs: number;
  /** Requests that may wait for a pooled connection at once; beyond, they are refused at once. */
  maxWaiting: number;
  /** A pooled connection idle this long is closed (0: kept until it fails). */
  idleTimeoutMs: number;
}

/** A cache's bounds: entries, and the bytes of what it keeps (estimated) where entries differ in size. */
export interface CacheBounds {
  maxEntries: number;
  maxBytes?: number;
}

/** Distinct SQL texts each database connection prepares unless DATABASE_PREPARED_STATEMENTS says otherwise. */
export const DEFAULT_PREPARED_STATEMENTS = 500;

/** Before every event channel name unless EVENTS_CHANNEL_PREFIX says otherwise. */
export const DEFAULT_CHANNEL_PREFIX = 'petstore:';

/**
 * Every setting the gateway reads, validated once at start-up. A bad value
 * stops the process with one line per setting naming what it accepts.
 */
const flag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { error: `${name} must be true or false` })
    .transform((value) => value === 'true' || value === '1');

const port = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a whole number from 0 to 65535` })
    .int({ error: `${name} must be a whole number from 0 to 65535` })
    .min(0, { error: `${name} must be a whole number from 0 to 65535` })
    .max(65535, { error: `${name} must be a whole number from 0 to 65535` });

const postgresUrl = (name: string) =>
  z.string().refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), {
    error: `${name} must be a PostgreSQL connection URL (postgresql://user@host:5432/database)`,
  });

const isoDate = (name: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${name} must be a date written YYYY-MM-DD` })
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), {
      error: `${name} must be a real calendar date (YYYY-MM-DD)`,
    });

const wholeNumber = (name: string, min: number, max: number) => {
  const message = `${name} must be a whole number from ${min} to ${max}`;
  return z.coerce
    .number({ error: message })
    .int({ error: message })
    .min(min, { error: message })
    .max(max, { error: message });
};

const positiveNumber = (name: string, min: number, max: number) => {
  const message = `${name} must be a number from ${min} to ${max}`;
  return z.coerce.number({ error: message }).min(min, { error: message }).max(max, { error: message });
};

const httpsOrLocalUrl = (name: string) =>
  z.string().refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    error: `${name} must be an http(s) URL`,
  });

/** OTLP over HTTP, in either of its encodings (gRPC is not served: it would bring a second transport). */
const otlpProtocol = (name: string) =>
  z.enum(['http/protobuf', 'http/json'], { error: `${name} must be http/protobuf or http/json` });

/** The W3C Baggage-like lists of the OTEL_* variables: `key=value` pairs, comma-separated. */
const keyValueList = (name: string) =>
  z.string().refine((value) => value.split(',').every((pair) => /^\s*[^=\s,]+\s*=[^,]*$/.test(pair)), {
    error: `${name} must be key=value pairs, comma-separated`,
  });

const isWebOrigin = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);

/** What a setting is for, for docs/configuration.md (npm run docs:config); `shownDefault` where the default is not one value. */
type SettingDoc = {
  group: string;
  description: string;
  shownDefault?: string;
};
const about = (group: string, description: string, shownDefault?: string): SettingDoc => ({
  group,
  description,
  ...(shownDefault === undefined ? {} : { shownDefault }),
});

const environmentSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'], { error: 'NODE_ENV must be development, test or production' })
    .default('development').meta(about('Server', '`development`, `test` or `production`. Production refuses to start without a token key, and turns GraphiQL and introspection off unless told.')),
  HOST: z.string().min(1, { error: 'HOST must be a host name or address to listen on' }).default('127.0.0.1').meta(about('Server', 'The address the gateway listens on.')),
  PORT: port('PORT').default(4000).meta(about('Server', 'The port the gateway listens on (`0`: any free port, printed at start).')),
  METRICS_PORT: port('METRICS_PORT').optional().meta(about('Metrics and logs', 'Serve `/metrics` on a port of its own (then not on the API\'s), for a scraper on a network clients do not reach.', 'the API\'s port')),
  METRICS_CLIENT_CLAIM: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, { error: 'METRICS_CLIENT_CLAIM must be the name of a token claim, such as azp or client_id' })
    .optional().meta(about('Metrics and logs', 'The token claim naming the client application (`azp`, `client_id`…), used as the `client` label of the deprecation metrics.', '(none)')),
  METRICS_TOKEN: z
    .string()
    .min(16, { error: 'METRICS_TOKEN must be at least 16 characters (the bearer token Prometheus sends)' })
    .optional().meta(about('Metrics and logs', 'A bearer token `/metrics` asks for, at least 16 characters.', '(none: open)')),
  DATABASE_URL: postgresUrl('DATABASE_URL').optional().meta(about('Database', 'PostgreSQL connection URL, `postgresql://user@host:5432/db`. Without it the gateway runs the embedded PostgreSQL.', '(embedded PGlite)')),
  DATABASE_POOL_SIZE: wholeNumber('DATABASE_POOL_SIZE', 1, 100).optional().meta(about('Database', 'Connections in the pool, 1–100.', '10 (1 embedded)')),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber('DATABASE_STATEMENT_TIMEOUT_MS', 100, 600_000).default(5_000).meta(about('Limits', 'PostgreSQL cancels any statement running longer (`TIMEOUT`, 503; a write is undone whole). Not on the embedded database.')),
  DATABASE_CONNECT_TIMEOUT_MS: wholeNumber('DATABASE_CONNECT_TIMEOUT_MS', 100, 600_000).default(5_000).meta(about('Database', 'Connecting to PostgreSQL, and waiting for a pooled connection.')),
  DATABASE_QUERY_TIMEOUT_MS: wholeNumber('DATABASE_QUERY_TIMEOUT_MS', 100, 600_000).optional().meta(about('Database', 'How long the gateway waits for one statement\'s answer before it gives the connection up (a server gone silent).', 'statement timeout + 2000')),
  DATABASE_MAX_WAITING: wholeNumber('DATABASE_MAX_WAITING', 0, 100_000).default(50).meta(about('Database', 'Requests that may wait for a database connection at once; more are answered `503 UNAVAILABLE` at once.')),
  DATABASE_IDLE_TIMEOUT_MS: wholeNumber('DATABASE_IDLE_TIMEOUT_MS', 0, 86_400_000).default(10_000).meta(about('Database', 'A pooled connection idle this long is closed (`0`: kept until it fails).')),
  EMBEDDED_DATABASE_IDLE_TIMEOUT_MS: wholeNumber('EMBEDDED_DATABASE_IDLE_TIMEOUT_MS', 0, 86_400_000).default(0).meta(about('Embedded database', 'The embedded database closes a connection idle this long, as PostgreSQL\'s `idle_session_timeout` does (`0`: never).')),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: wholeNumber('HTTP_KEEP_ALIVE_TIMEOUT_MS', 0, 3_600_000).default(5_000).meta(about('Server', 'How long an idle HTTP keep-alive connection stays open. Behind a proxy, keep the proxy\'s own idle timeout below it.')),
  DATABASE_PREPARED_STATEMENTS: wholeNumber('DATABASE_PREPARED_STATEMENTS', 0, 10_000).optional().meta(about('Database', 'How many distinct SQL texts run as named prepared statements, so PostgreSQL parses and plans each once per connection (later texts run unnamed). `0` prepares none, as PgBouncer in transaction mode before 1.21 needs.', '500 (0 with `DATABASE_POOLER=pgbouncer`)')),
  DATABASE_POOLER: z
    .enum(['none', 'pgbouncer'], { error: 'DATABASE_POOLER must be none or pgbouncer (PgBouncer in transaction pooling mode)' })
    .default('none').meta(about('Database', '`pgbouncer` when `DATABASE_URL` points at PgBouncer in transaction pooling mode: no startup parameters, no prepared statements (see operations.md).')),
  DATABASE_REPLICA_URLS: z
    .string()
    .refine(
      (value) =>
        value
          .split(',')
          .map((url) => url.trim())
          .every((url) => /^postgres(ql)?:\/\//.test(url) && URL.canParse(url)),
      { error: 'DATABASE_REPLICA_URLS must be a comma-separated list of PostgreSQL connection URLs (postgresql://user@replica:5432/database)' },
    )
    .optional().meta(about('Database', 'Streaming replicas of `DATABASE_URL`, comma-separated: reads go there, with read-your-writes (see operations.md).', '(none)')),
  DATABASE_REPLICA_MAX_LAG_MS: wholeNumber('DATABASE_REPLICA_MAX_LAG_MS', 0, 3_600_000).default(5_000).meta(about('Database', 'A replica further behind than this leaves rotation until it catches up.')),
  DATABASE_REPLICA_CHECK_INTERVAL_MS: wholeNumber('DATABASE_REPLICA_CHECK_INTERVAL_MS', 100, 60_000).default(1_000).meta(about('Database', 'How often each replica\'s health and lag are checked.')),
  REQUEST_TIMEOUT_MS: wholeNumber('REQUEST_TIMEOUT_MS', 100, 600_000).default(10_000).meta(about('Limits', 'A request still running after this is answered `503 TIMEOUT`; a statement of it still running is cancelled in PostgreSQL.')),
  SHUTDOWN_GRACE_MS: wholeNumber('SHUTDOWN_GRACE_MS', 0, 600_000).default(10_000).meta(about('Server', 'How long accepted requests may take to finish after SIGTERM.')),
  SHUTDOWN_DRAIN_MS: wholeNumber('SHUTDOWN_DRAIN_MS', 0, 600_000).optional().meta(about('Server', 'How long the listener stays open after SIGTERM while `/readyz` says 503, so load balancers stop routing first.', '0 (5000 in production)')),
  AUTH_JWT_SECRET: z
    .string()
    .min(32, { error: 'AUTH_JWT_SECRET must be at least 32 characters (the HS256 shared secret)' })
    .optional().meta(about('Authentication', 'HS256 shared secret of bearer tokens, at least 32 characters.', '(a development key in `DATA_DIR`; required in production)')),
  AUTH_JWKS_URL: httpsOrLocalUrl('AUTH_JWKS_URL').optional().meta(about('Authentication', 'Your identity provider\'s key set (RS256, ES256, PS256, EdDSA); needs `AUTH_ISSUER` and `AUTH_AUDIENCE`. Keys that cannot be fetched: `503 UNAVAILABLE`.', '(none)')),
  AUTH_ISSUER: z.string().min(1).optional().meta(about('Authentication', 'The `iss` tokens must carry (checked when set; required with `AUTH_JWKS_URL`).', '(none)')),
  AUTH_AUDIENCE: z.string().min(1).optional().meta(about('Authentication', 'The `aud` tokens must carry (checked when set; required with `AUTH_JWKS_URL`).', '(none)')),
  REDIS_URL: z
    .string()
    .refine((value) => /^rediss?:\/\//.test(value) && URL.canParse(value), {
      error: 'REDIS_URL must be a Redis URL (redis://host:6379)',
    })
    .optional().meta(about('Redis and events', 'Shares rate limits, subscription events, and the response cache\'s write log and answers between instances.', '(none: in process)')),
  REDIS_CONNECT_TIMEOUT_MS: wholeNumber('REDIS_CONNECT_TIMEOUT_MS', 50, 600_000).default(2_000).meta(about('Redis and events', 'Connecting to Redis.')),
  REDIS_COMMAND_TIMEOUT_MS: wholeNumber('REDIS_COMMAND_TIMEOUT_MS', 50, 600_000).default(500).meta(about('Redis and events', 'One Redis command. While Redis is away commands fail at once (no queue) and the client reconnects by itself.')),
  EVENTS_CHANNEL_PREFIX: z
    .string()
    .regex(/^[\w.:-]{0,64}$/, {
      error: 'EVENTS_CHANNEL_PREFIX must be up to 64 letters, digits, and . : _ - (e.g. petstore:staging:)',
    })
    .default(DEFAULT_CHANNEL_PREFIX).meta(about('Redis and events', 'Before the name of every Redis channel of subscription events (and the response cache\'s keys), so deployments sharing one Redis do not hear each other.')),
  RATE_LIMIT_REQUESTS: wholeNumber('RATE_LIMIT_REQUESTS', 1, 1_000_000).default(600).meta(about('Limits', 'Requests per client per window; over it, `429 RATE_LIMITED` with `Retry-After`.')),
  RATE_LIMIT_WINDOW_SECONDS: wholeNumber('RATE_LIMIT_WINDOW_SECONDS', 1, 86_400).default(60).meta(about('Limits', 'The rate limit\'s window.')),
  RATE_LIMIT_KEY_PREFIX: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, {
      error: 'RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters, digits, and . : _ - (e.g. petstore-rate:staging)',
    })
    .default('petstore-rate').meta(about('Limits', 'Before every rate-limit counter\'s key in Redis, so deployments sharing one Redis count apart.')),
  RESPONSE_CACHE_TTL_MS: wholeNumber('RESPONSE_CACHE_TTL_MS', 0, 3_600_000).default(0).meta(about('Response cache', 'Serve GraphQL queries from memory, per scope set, until a write they depend on or this long (`0`: off). See operations.md.')),
  RESPONSE_CACHE_MAX_ENTRIES: wholeNumber('RESPONSE_CACHE_MAX_ENTRIES', 1, 1_000_000).default(10_000).meta(about('Response cache', 'Answers kept at most.')),
  RESPONSE_CACHE_MAX_BYTES: wholeNumber('RESPONSE_CACHE_MAX_BYTES', 1_000_000, 8_000_000_000).default(64_000_000).meta(about('Response cache', 'The size of the answers kept at most; the least recently used go first.')),
  LIVE_QUERY_MAX_PER_INSTANCE: wholeNumber('LIVE_QUERY_MAX_PER_INSTANCE', 0, 1_000_000).default(10_000).meta(about('Live queries', 'Live queries (`@live`) open at once on one instance; more are refused with `429 RATE_LIMITED` (`0`: `@live` is answered once, like any query). See live-queries.md.')),
  LIVE_QUERY_MAX_PER_CLIENT: wholeNumber('LIVE_QUERY_MAX_PER_CLIENT', 1, 1_000_000).default(100).meta(about('Live queries', 'Live queries one client (token subject, else address) may have open at once on one instance.')),
  LIVE_QUERY_MAX_PER_CONNECTION: wholeNumber('LIVE_QUERY_MAX_PER_CONNECTION', 1, 10_000).default(25).meta(about('Live queries', 'Live queries open at once on one WebSocket connection.')),
  LIVE_QUERY_MAX_CONCURRENT_RUNS: wholeNumber('LIVE_QUERY_MAX_CONCURRENT_RUNS', 1, 1_000).default(4).meta(about('Live queries', 'Live queries running again at once on one instance; the others wait their turn (a write that touches many must not crowd the database pool).')),
  LIVE_QUERY_MIN_INTERVAL_MS: wholeNumber('LIVE_QUERY_MIN_INTERVAL_MS', 0, 60_000).default(250).meta(about('Live queries', 'The shortest time between two runs of one live query: the writes that touch it meanwhile are answered by one run.')),
  BODY_LIMIT_BYTES: wholeNumber('BODY_LIMIT_BYTES', 1_024, 10_485_760).default(102_400).meta(about('Limits', 'A request body over this is `413 PAYLOAD_TOO_LARGE`, chunked bodies too.')),
  GRAPHQL_QUERY_PLANS: flag('GRAPHQL_QUERY_PLANS').default(true).meta(about('GraphQL execution and caches', 'Execute queries of the lists, lookups and relations the schema declares plannable by their plan: the Prisma reads and the shaping of their rows worked out once per document, with no resolver called per field per row; and the mutations it declares plannable (every write) by a plan that calls the domain\'s write and shapes its row. A plan is only the executor: every request passes the same pipeline (limits, authorization rules, cost, cache, routing) whichever engine runs it. Documents and requests a plan does not cover are executed field by field by graphql-js; the answers are the same (the test suite runs every query both ways, and the planned writes on two gateways).', '`true`')),
  GRAPHQL_PLAN_STATEMENTS: flag('GRAPHQL_PLAN_STATEMENTS').default(true).meta(about('GraphQL execution and caches', 'Read a planned list with one SQL statement of the gateway\'s own (to-one relations joined as columns, each related page one JSON array of the columns it shows) instead of Prisma\'s (each relation as JSONB in a LATERAL subquery), where the read is one the gateway\'s statements cover; the rows and the answers are the same. `false` reads every plan through Prisma.', '`true`')),
  GRAPHQL_PLAN_CACHE_MAX_ENTRIES: wholeNumber('GRAPHQL_PLAN_CACHE_MAX_ENTRIES', 1, 1_000_000).default(1_000).meta(about('GraphQL execution and caches', 'Documents whose query plans are kept; the least recently used go first.')),
  GRAPHQL_PLAN_CACHE_MAX_BYTES: wholeNumber('GRAPHQL_PLAN_CACHE_MAX_BYTES', 100_000, 8_000_000_000).default(16_000_000).meta(about('GraphQL execution and caches', 'Their size, estimated at 40 bytes per character of document text.')),
  GRAPHQL_DOCUMENT_CACHE_MAX_ENTRIES: wholeNumber('GRAPHQL_DOCUMENT_CACHE_MAX_ENTRIES', 1, 1_000_000).default(1_000).meta(about('GraphQL execution and caches', 'Parsed and validated documents kept by their text; what the plugins work out about a document goes with it.')),
  GRAPHQL_DOCUMENT_CACHE_MAX_BYTES: wholeNumber('GRAPHQL_DOCUMENT_CACHE_MAX_BYTES', 100_000, 8_000_000_000).default(32_000_000).meta(about('GraphQL execution and caches', 'Their size, estimated at 80 bytes of syntax tree per character of text.')),
  PRISMA_QUERY_PLAN_CACHE_MAX_ENTRIES: wholeNumber('PRISMA_QUERY_PLAN_CACHE_MAX_ENTRIES', 0, 1_000_000).default(1_000).meta(about('GraphQL execution and caches', 'Query plans Prisma keeps by query shape (`0`: none).')),
  PERSISTED_QUERIES_MAX_ENTRIES: wholeNumber('PERSISTED_QUERIES_MAX_ENTRIES', 1, 1_000_000).default(1_000).meta(about('GraphQL execution and caches', 'Documents registered by automatic persisted queries (`TRUSTED_DOCUMENTS=allow`).')),
  PERSISTED_QUERIES_MAX_BYTES: wholeNumber('PERSISTED_QUERIES_MAX_BYTES', 10_000, 8_000_000_000).default(8_000_000).meta(about('GraphQL execution and caches', 'Their size (text and id).')),
  TOKEN_CACHE_MAX_ENTRIES: wholeNumber('TOKEN_CACHE_MAX_ENTRIES', 1, 1_000_000).default(10_000).meta(about('Authentication', 'Verified bearer tokens remembered, each a minute at most and never past its expiry.')),
  TRUSTED_DOCUMENTS: z
    .enum(['off', 'allow', 'require'], {
      error: 'TRUSTED_DOCUMENTS must be off, allow (trusted document ids and full text) or require (trusted document ids only)',
    })
    .default('off').meta(about('Security', 'Which GraphQL documents run: `off` any; `allow` any, and also documents by id (manifests, automatic persisted queries); `require` only the manifests\' documents. See api.md.')),
  TRUSTED_DOCUMENTS_MANIFESTS: z.string().optional().meta(about('Security', 'The manifests of trusted documents, comma-separated JSON files as GraphQL Code Generator writes them (`sha256:<hash>` → text).', '(none)')),
  MAX_DEPTH: wholeNumber('MAX_DEPTH', 1, 100).default(12).meta(about('Limits', 'Query depth; deeper is `VALIDATION_FAILED` before anything runs.')),
  MAX_ALIASES: wholeNumber('MAX_ALIASES', 1, 1_000).default(20).meta(about('Limits', 'Aliases in a document.')),
  MAX_TOKENS: wholeNumber('MAX_TOKENS', 10, 100_000).default(2_000).meta(about('Limits', 'Tokens in a document.')),
  MAX_COST: wholeNumber('MAX_COST', 1, 10_000_000).default(5_000).meta(about('Limits', 'The most an operation may cost, estimated from the schema\'s `@cost` and `@listSize` before it runs (page sizes from variables too); over it, `COST_LIMIT_EXCEEDED`. See api.md, "What a request costs".')),
  COST_BUDGET_CAPACITY: wholeNumber('COST_BUDGET_CAPACITY', 1, 100_000_000).default(10_000).meta(about('Limits', 'Each client\'s budget of cost points (a bucket that refills): an operation runs when the bucket holds its estimated cost, and spends its actual cost; when it does not, `429 THROTTLED` with `Retry-After`. At least MAX_COST.')),
  COST_BUDGET_REFILL_PER_SECOND: positiveNumber('COST_BUDGET_REFILL_PER_SECOND', 0.001, 1_000_000_000).default(100).meta(about('Limits', 'Points each client\'s budget refills per second, up to its capacity.')),
  COST_BUDGET_ON_REDIS_FAILURE: z
    .enum(['local', 'allow', 'refuse'], { error: 'COST_BUDGET_ON_REDIS_FAILURE must be local, allow or refuse' })
    .default('local').meta(about('Limits', 'While Redis does not answer within `REDIS_COMMAND_TIMEOUT_MS`: `local` keeps each instance\'s own budgets, `allow` lets requests through unspent, `refuse` answers `503 UNAVAILABLE`.')),
  COST_ESTIMATES_MAX_ENTRIES: wholeNumber('COST_ESTIMATES_MAX_ENTRIES', 0, 1_000_000).default(10_000).meta(about('GraphQL execution and caches', 'Cost estimates kept, per document, operation and the values of the variables they depend on (page sizes, `@skip`/`@include`); `0` estimates every request afresh.')),
  COST_LIST_SIZE: wholeNumber('COST_LIST_SIZE', 1, 100_000).default(20).meta(about('Limits', 'The length a list without `@listSize` is assumed to have in cost estimates.')),
  MAX_DIRECTIVES: wholeNumber('MAX_DIRECTIVES', 1, 1_000).default(50).meta(about('Limits', 'Directives in a document.')),
  MAX_BATCH: wholeNumber('MAX_BATCH', 1, 100).default(10).meta(about('Limits', 'Operations in one batch (a JSON array).')),
  INTROSPECTION: flag('INTROSPECTION').optional().meta(about('Security', 'Allow `__schema`/`__type` (but `__schema { description }`, the contract\'s version, is always answered); off also hides "Did you mean …" suggestions.', 'true (false in production)')),
  FEDERATION: flag('FEDERATION').default(false).meta(about('Security', 'Serve the schema as a Federation v2 subgraph (`_service`, `_entities`, `@key` on Pet, Category, Order and InventoryItem) for a router such as Hive Gateway; off, it is the standalone schema. See federation.md.', '`false`')),
  CORS_ORIGINS: z
    .string()
    .refine((value) => value.split(',').every((origin) => origin.trim() === '*' || isWebOrigin(origin.trim())), {
      error: 'CORS_ORIGINS must be a comma-separated list of origins (https://shop.example) or *',
    })
    .optional().meta(about('Security', 'Origins allowed to call from a browser, comma-separated, or `*`.', '(none)')),
  MIGRATE_ON_START: flag('MIGRATE_ON_START').optional().meta(about('Database', 'Apply pending migrations at start (also the `--migrate` flag).', 'true embedded, else false')),
  DATA_DIR: z.string().min(1, { error: 'DATA_DIR must be a folder path' }).default('.data').meta(about('Embedded database', 'Where the embedded database and the development token key live.')),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info').meta(about('Metrics and logs', '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; JSON lines on stdout (pino).')),
  GRAPHIQL: flag('GRAPHIQL').optional().meta(about('Security', 'Serve GraphiQL at `GET /graphql`.', 'true (false in production)')),
  TRUST_PROXY: z
    .string()
    .transform((value, context): TrustProxy => {
      const trimmed = value.trim();
      if (trimmed === 'false') return false;
      if (trimmed === 'true') return true;
      if (/^\d+$/.test(trimmed)) return Number(trimmed);
      const addresses = trimmed.split(',').map((address) => address.trim());
      try {
        proxyAddr.compile(addresses);
        return addresses;
      } catch {
        context.addIssue({
          code: 'custom',
          message:
            'TRUST_PROXY must be false, true, a number of proxy hops (1), or a comma-separated list of proxy ' +
            'addresses or subnets (10.0.0.0/8, loopback, uniquelocal)',
        });
        return z.NEVER;
      }
    })
    .optional().meta(about('Security', 'Which proxies may name the client in `X-Forwarded-For`: `false`, `true`, a number of hops, or addresses and subnets (`10.0.0.0/8, loopback`). Rate limits count anonymous clients by that address.', 'false')),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpsOrLocalUrl('OTEL_EXPORTER_OTLP_ENDPOINT').optional().meta(about('Traces', 'Where an OpenTelemetry collector takes OTLP over HTTP (`http://collector:4318`; traces go to `/v1/traces` beneath it). Set, the gateway sends traces (see tracing.md); unset, tracing is off and costs nothing.', '(none: no traces)')),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpsOrLocalUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').optional().meta(about('Traces', 'The full URL traces are posted to, when it is not `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; also turns traces on.', '(none)')),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_PROTOCOL').default('http/protobuf').meta(about('Traces', '`http/protobuf` or `http/json`.')),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL').optional().meta(about('Traces', 'The protocol of traces alone.', '`OTEL_EXPORTER_OTLP_PROTOCOL`')),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList('OTEL_EXPORTER_OTLP_HEADERS').optional().meta(about('Traces', 'Headers sent with every export, `name=value` comma-separated, values URL-encoded (`authorization=Bearer%20…`).', '(none)')),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList('OTEL_EXPORTER_OTLP_TRACES_HEADERS').optional().meta(about('Traces', 'Headers sent with the export of traces alone.', '(none)')),
  OTEL_EXPORTER_OTLP_TIMEOUT: wholeNumber('OTEL_EXPORTER_OTLP_TIMEOUT', 100, 600_000).optional().meta(about('Traces', 'How long one export may take, in milliseconds; a collector that does not answer costs a batch of spans, never a request.', '`10000`')),
  OTEL_SERVICE_NAME: z.string().min(1).optional().meta(about('Traces', 'The `service.name` of the traces.', '`petstore-gateway`')),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList('OTEL_RESOURCE_ATTRIBUTES').optional().meta(about('Traces', 'More resource attributes, `key=value` comma-separated (`deployment.environment.name=prod,service.version=1.4.0`).', '(none)')),
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'], {
      error: 'OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio',
    })
    .default('parentbased_always_on').meta(about('Traces', 'Which requests are traced. `parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG=0.1` keeps one trace in ten, and always follows the caller\'s decision (`traceparent`).')),
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number({ error: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
    .min(0, { error: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
    .max(1, { error: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1' })
    .optional().meta(about('Traces', 'The share of traces kept by the `…traceidratio` samplers, 0–1.', '`1`')),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'OTEL_TRACES_EXPORTER must be otlp or none' }).optional().meta(about('Traces', '`none` turns traces off with the endpoint still set.', '`otlp`')),
  OTEL_BSP_SCHEDULE_DELAY: wholeNumber('OTEL_BSP_SCHEDULE_DELAY', 0, 600_000).optional().meta(about('Traces', 'Milliseconds between two exports of ended spans.', '`5000`')),
  OTEL_BSP_EXPORT_TIMEOUT: wholeNumber('OTEL_BSP_EXPORT_TIMEOUT', 100, 600_000).optional().meta(about('Traces', 'How long one batch may take to export.', '`30000`')),
  OTEL_BSP_MAX_QUEUE_SIZE: wholeNumber('OTEL_BSP_MAX_QUEUE_SIZE', 1, 1_000_000).optional().meta(about('Traces', 'Ended spans kept waiting for export at most; beyond, new ones are dropped (the bound of tracing\'s memory).', '`2048`')),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: wholeNumber('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 1, 1_000_000).optional().meta(about('Traces', 'Spans in one export at most; no more than the queue.', '`512`')),
  OTEL_SDK_DISABLED: flag('OTEL_SDK_DISABLED').default(false).meta(about('Traces', '`true` turns traces off whatever else is set.')),
  GRAPHQL_RESOLVER_SPANS: flag('GRAPHQL_RESOLVER_SPANS').default(false).meta(about('Traces', 'A span per field resolver called (not on query plans, which call none). Costly: for looking into one slow operation, not for production.')),
  LEGACY_SUNSET_DATE: isoDate('LEGACY_SUNSET_DATE').default(DEFAULT_LEGACY_SUNSET_DATE).meta(about('Legacy lookup', 'When the legacy single-pet lookup goes away (`getPetById`\'s deprecation, REST `Sunset`).')),
  LEGACY_AFTER_SUNSET: z
    .enum(legacyAfterSunsetChoices, {
      error: 'LEGACY_AFTER_SUNSET must be serve (keep answering GET /pets/{petId}) or gone (answer 410)',
    })
    .default(DEFAULT_LEGACY_AFTER_SUNSET).meta(about('Legacy lookup', 'After the sunset date: `serve` keeps `GET /pets/{petId}` answering, `gone` answers 410.')),
  // Checked with the sunset date it must precede, in legacySettings.
  LEGACY_BROWNOUTS: z.string().optional().meta(about('Legacy lookup', 'Brownout windows before the sunset, comma-separated, in UTC: `2027-05-04T14:00Z/PT2H` or `2027-05-04T14:00Z/2027-05-04T16:00Z`. See versioning.md.', '(none)')),
});


/** The name of every environment variable the gateway reads. */
export const settingNames: readonly string[] = Object.keys(environmentSchema.shape);

/** A setting as docs/configuration.md shows it. */
export interface SettingDescription {
  name: string;
  group: string;
  description: string;
  /** As written in the environment, or what happens without it. */
  shownDefault: string;
}

/** Every setting with what it is for and its default, read from the schema that validates it. */
export function describeSettings(): SettingDescription[] {
  return Object.entries(environmentSchema.shape).map(([name, schema]) => {
    const doc = z.globalRegistry.get(schema) as SettingDoc | undefined;
    if (!doc) throw new Error(`${name} has no description: give it .meta(about(…)) in src/config.ts`);
    const unset = schema.safeParse(undefined);
    const value = unset.success && unset.data !== undefined ? `\`${String(unset.data)}\`` : '(none)';
    return { name, group: doc.group, description: doc.description, shownDefault: doc.shownDefault ?? value };
  });
}

/**
 * Which proxies in front of the gateway are trusted to say who the client is
 * (X-Forwarded-For), as Express and Fastify define it: false (the socket's
 * address is the client), true (every proxy: the first address in the header),
 * a number of hops, or the proxies' addresses and subnets.
 */
export type TrustProxy = boolean | number | string[];

export interface RedisTimeouts {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
}

/**
 * ioredis options bounded by `timeouts`: a command that gets no answer fails
 * after commandTimeoutMs, and while Redis is away commands fail at once rather
 * than queue; the client reconnects by itself, at most two seconds apart.
 */
export function redisOptions(timeouts: RedisTimeouts, { queueWhileAway = false } = {}) {
  return {
    connectTimeout: timeouts.connectTimeoutMs,
    commandTimeout: timeouts.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: queueWhileAway,
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
    // Commands sent in the same turn of the event loop (the response cache's lookups, rate limits
    // of concurrent requests) go out in one write.
    enableAutoPipelining: true,
  };
}

/** How bearer tokens are verified; `development` means a key made for the data folder. */
export type AuthSettings =
  | { kind: 'hs256'; secret: string; issuer?: string; audience?: string }
  | { kind: 'jwks'; url: string; issuer: string; audience: string }
  | { kind: 'development' };

/** The limits a request must stay within; each is a setting. */
export interface Limits {
  bodyBytes: number;
  requestTimeoutMs: number;
  statementTimeoutMs: number;
  /** Connecting to PostgreSQL and waiting for a pooled connection, the client's wait for one statement, the queue. */
  database: DatabaseTimeouts;
  /** `keyPrefix`: before every counter's key in Redis, so deployments sharing one Redis count apart. */
  rateLimit: { requests: number; windowSeconds: number; keyPrefix?: string };
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  /** The most an operation may cost (the schema's @cost and @listSize, src/http/demand/). */
  maxCost: number;
  /** Each client's budget of cost points, spent by actual cost (src/http/demand/budget.ts). */
  costBudget: { capacity: number; refillPerSecond: number; onRedisFailure: 'local' | 'allow' | 'refuse' };
  /** The length assumed of a list without @listSize. */
  unsizedList: number;
  /** Cost estimates kept (0: none). */
  costEstimates: number;
  maxDirectives: number;
  maxBatch: number;
}

/**
 * The response cache. Each instance keeps answers in memory; with Redis, the write log that outdates
 * them and the answers themselves are shared there, under `keyPrefix`.
 */
export interface ResponseCacheSettings {
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  keyPrefix: string;
}

/** Queries marked @live (src/http/live-queries/): how often one may run again, and how many may be open. */
export interface LiveQuerySettings {
  /** The shortest time between two runs of one live query (LIVE_QUERY_MIN_INTERVAL_MS). */
  minIntervalMs: number;
  /** Live queries open at once on one connection (a WebSocket's; an SSE request is one). */
  maxPerConnection: number;
  /** Live queries open at once by one client (token subject, else address), on one instance. */
  maxPerClient: number;
  /** Live queries open at once on one instance. */
  maxPerInstance: number;
  /** Live queries running again at once on one instance; the others wait their turn. */
  maxConcurrentRuns: number;
}

export interface Config {
  nodeEnv: 'development' | 'test' | 'production';
  host: string;
  port: number;
  /** undefined: run the embedded PostgreSQL (PGlite) kept in `dataDir`. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Distinct SQL statements each connection prepares (names); 0 for none, as PgBouncer before 1.21 needs. */
  databasePreparedStatements: number;
  /**
   * `pgbouncer`: PostgreSQL is reached through PgBouncer in transaction pooling mode, which keeps no session
   * state: no startup parameters (the statement timeout is the database's own setting) and, by default, no
   * prepared statements.
   */
  databasePooler: 'none' | 'pgbouncer';
  /** Streaming replicas that take reads (none when empty), and when one leaves rotation. */
  databaseReplicas: { urls: string[]; maxLagMs: number; checkIntervalMs: number };
  migrateOnStart: boolean;
  dataDir: string;
  /** The embedded database closes a wire connection idle this long (0: never), as PostgreSQL's idle_session_timeout. */
  embeddedIdleTimeoutMs: number;
  /** How long an idle HTTP keep-alive connection stays open (Node's keepAliveTimeout). */
  httpKeepAliveTimeoutMs: number;
  logLevel: string;
  graphiql: boolean;
  /** When the legacy single-pet lookup goes away (GraphQL and REST), whether it answers 410 Gone after, and its brownouts. */
  legacy: LegacySettings;
  auth: AuthSettings;
  limits: Limits;
  /** Shared rate limits (and events) across instances; in memory when absent. */
  redisUrl: string | undefined;
  /** Bounds of every call to Redis: connecting, and each command. */
  redisTimeouts: RedisTimeouts;
  /** Put before the name of every event channel, so deployments sharing one Redis do not hear each other. */
  eventsChannelPrefix: string;
  /** Off (undefined) unless RESPONSE_CACHE_TTL_MS is set above 0. */
  responseCache: ResponseCacheSettings | undefined;
  /** Queries marked @live: their pace and limits; off (answered once) when LIVE_QUERY_MAX_PER_INSTANCE is 0. */
  liveQueries: LiveQuerySettings | undefined;
  introspection: boolean;
  /** Serve the schema as an Apollo Federation v2 subgraph (`_service`, `_entities`, `@key`s): docs/federation.md. */
  federation: boolean;
  /** Origins allowed to call from a browser; none when empty. */
  corsOrigins: string[];
  /** Query plans (GRAPHQL_QUERY_PLANS), how many are kept, and what reads their lists; off when undefined. */
  queryPlans: (CacheBounds & { ownStatements: boolean }) | undefined;
  /** Parsed documents kept by their text (yoga's parse cache); the per-document facts of the plugins go with them. */
  documentCache: CacheBounds;
  /** Query plans Prisma keeps by query shape (its own LRU; 0 keeps none). */
  prismaQueryPlanCacheMaxEntries: number;
  /** Documents registered by automatic persisted queries (TRUSTED_DOCUMENTS=allow). */
  persistedQueries: CacheBounds;
  /** Verified bearer tokens remembered (each at most a minute, never past its expiry). */
  tokenCacheMaxEntries: number;
  /** Which GraphQL documents are accepted (TRUSTED_DOCUMENTS) and the manifests' documents by id. */
  trustedDocuments: TrustedDocumentsSettings;
  /** Where the client's address comes from, for rate limits (TRUST_PROXY). */
  trustProxy: TrustProxy;
  /** /metrics on a port of its own (METRICS_PORT), else on the API's; and the token it asks for. */
  metrics: { port: number | undefined; token: string | undefined; clientClaim: string | undefined };
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownGraceMs: number;
  /** How long the listener stays open after SIGTERM (while /readyz says 503), so load balancers can stop routing. */
  shutdownDrainMs: number;
  /** OpenTelemetry traces (the OTEL_* variables, read by the SDK itself once validated here). */
  tracing: TracingSettings;
}

/** Whether traces are sent (an OTLP endpoint, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none), and what the gateway adds. */
export interface TracingSettings {
  enabled: boolean;
  /** service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
  defaultServiceName: string | undefined;
  /** A span per resolver call (GRAPHQL_RESOLVER_SPANS). */
  resolverSpans: boolean;
}

/**
 * The settings the gateway's request path reads, handed to createGateway as one object: a new
 * setting of a plugin is read where the plugin is composed, and passes through nothing in between.
 */
export type GatewaySettings = Pick<
  Config,
  | 'limits'
  | 'responseCache'
  | 'liveQueries'
  | 'graphiql'
  | 'introspection'
  | 'corsOrigins'
  | 'trustProxy'
  | 'legacy'
  | 'federation'
  | 'queryPlans'
  | 'documentCache'
  | 'persistedQueries'
  | 'trustedDocuments'
  | 'metrics'
  | 'tracing'
>;

function authSettings(settings: z.output<typeof environmentSchema>): AuthSettings | string[] {
  const { AUTH_JWT_SECRET: secret, AUTH_JWKS_URL: url, AUTH_ISSUER: issuer, AUTH_AUDIENCE: audience } = settings;
  if (secret && url) return ['Set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both'];
  if (url) {
    if (!issuer || !audience) return ['AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE (the tokens your provider issues)'];
    return { kind: 'jwks', url, issuer, audience };
  }
  if (secret) return { kind: 'hs256', secret, ...(issuer ? { issuer } : {}), ...(audience ? { audience } : {}) };
  if (settings.NODE_ENV === 'production') {
    return ['In production AUTH_JWT_SECRET or AUTH_JWKS_URL must be set: the gateway does not make its own key there'];
  }
  return { kind: 'development' };
}

function legacySettings(settings: z.output<typeof environmentSchema>): LegacySettings | string[] {
  const { windows, problems } = parseBrownouts(settings.LEGACY_BROWNOUTS ?? '', settings.LEGACY_SUNSET_DATE);
  if (windows.length > 0 && settings.LEGACY_AFTER_SUNSET === 'serve') {
    problems.push(
      'LEGACY_BROWNOUTS rehearse the 410 the legacy lookup gives after its sunset, but LEGACY_AFTER_SUNSET=serve ' +
        'keeps it answering then: unset one of them',
    );
  }
  if (problems.length > 0) return problems;
  return { sunsetDate: settings.LEGACY_SUNSET_DATE, afterSunset: settings.LEGACY_AFTER_SUNSET, brownouts: windows };
}

/**
 * Trusted documents: `off` runs any document; `allow` also takes a document by its id (a manifest's, or
 * one registered by Apollo's automatic persisted queries); `require` runs only the manifests' documents,
 * sent by id. `documents`: document id (`sha256:<hex of the text>`) -> the document's text.
 */
export interface TrustedDocumentsSettings {
  mode: 'off' | 'allow' | 'require';
  documents: ReadonlyMap<string, string>;
}

const DOCUMENT_ID = /^sha256:[0-9a-f]{64}$/;

/** Reads the manifests GraphQL Code Generator's client preset writes (persisted-documents.json), checking each entry. */
function trustedDocuments(settings: z.output<typeof environmentSchema>): TrustedDocumentsSettings | string[] {
  const mode = settings.TRUSTED_DOCUMENTS;
  const files = (settings.TRUSTED_DOCUMENTS_MANIFESTS ?? '').split(',').map((file) => file.trim()).filter(Boolean);
  if (mode === 'require' && files.length === 0) {
    return ['TRUSTED_DOCUMENTS=require needs TRUSTED_DOCUMENTS_MANIFESTS: the manifest files of the documents to accept'];
  }
  const documents = new Map<string, string>();
  const problems: string[] = [];
  for (const file of files) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(path.resolve(file), 'utf8'));
    } catch (error) {
      problems.push(`TRUSTED_DOCUMENTS_MANIFESTS: ${file} cannot be read as JSON (${(error as Error).message})`);
      continue;
    }
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) {
      problems.push(`TRUSTED_DOCUMENTS_MANIFESTS: ${file} must be a JSON object of document ids and their text`);
      continue;
    }
    for (const [id, text] of Object.entries(manifest)) {
      const hash = typeof text === 'string' ? createHash('sha256').update(text).digest('hex') : undefined;
      if (!DOCUMENT_ID.test(id) || hash === undefined || id !== `sha256:${hash}`) {
        problems.push(`TRUSTED_DOCUMENTS_MANIFESTS: in ${file}, ${id.slice(0, 80)} is not sha256:<the SHA-256 of its document's text>`);
        break;
      }
      documents.set(id, text as string);
    }
  }
  return problems.length > 0 ? problems : { mode, documents };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the settings from `env` (process.env by default). Throws ConfigError listing every bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env, flags: string[] = []): Config {
  // An empty variable is treated as unset, as shells and compose files often leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => issue.message));
  }
  const settings = parsed.data;
  const auth = authSettings(settings);
  const legacy = legacySettings(settings);
  const trusted = trustedDocuments(settings);
  const problems = [
    ...(Array.isArray(auth) ? auth : []),
    ...(Array.isArray(legacy) ? legacy : []),
    ...(Array.isArray(trusted) ? trusted : []),
  ];
  if (Array.isArray(auth) || Array.isArray(legacy) || Array.isArray(trusted)) throw new ConfigError(problems);
  const embedded = settings.DATABASE_URL === undefined;
  const production = settings.NODE_ENV === 'production';
  const shutdownDrainMs = settings.SHUTDOWN_DRAIN_MS ?? (production ? 5_000 : 0);
  if (shutdownDrainMs > 0 && shutdownDrainMs >= settings.SHUTDOWN_GRACE_MS) {
    throw new ConfigError(['SHUTDOWN_DRAIN_MS must be shorter than SHUTDOWN_GRACE_MS (the drain is part of the grace period)']);
  }
  if (settings.COST_BUDGET_CAPACITY < settings.MAX_COST) {
    throw new ConfigError([
      `COST_BUDGET_CAPACITY (${settings.COST_BUDGET_CAPACITY}) must be at least MAX_COST (${settings.MAX_COST}): an operation the limit allows must fit in a full budget`,
    ]);
  }
  if (settings.FEDERATION && settings.TRUSTED_DOCUMENTS === 'require') {
    // A router writes the subgraph operations of each query plan itself: no manifest can list them.
    throw new ConfigError([
      'FEDERATION=true cannot be combined with TRUSTED_DOCUMENTS=require: the router sends operations of its own making; require trusted documents at the router instead',
    ]);
  }
  if (
    settings.OTEL_BSP_MAX_EXPORT_BATCH_SIZE !== undefined &&
    settings.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > (settings.OTEL_BSP_MAX_QUEUE_SIZE ?? 2048)
  ) {
    throw new ConfigError(['OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE (2048 unless set): a batch is taken from the queue']);
  }
  if (embedded && settings.DATABASE_REPLICA_URLS !== undefined) {
    throw new ConfigError(['DATABASE_REPLICA_URLS needs DATABASE_URL: replicas follow a PostgreSQL primary, not the embedded database']);
  }
  return {
    nodeEnv: settings.NODE_ENV,
    host: settings.HOST,
    port: settings.PORT,
    databaseUrl: settings.DATABASE_URL,
    // PGlite runs one statement at a time; more connections would only queue (they may: it is safe).
    databasePoolSize: settings.DATABASE_POOL_SIZE ?? (embedded ? 1 : 10),
    databasePreparedStatements:
      settings.DATABASE_PREPARED_STATEMENTS ?? (settings.DATABASE_POOLER === 'pgbouncer' ? 0 : DEFAULT_PREPARED_STATEMENTS),
    databasePooler: settings.DATABASE_POOLER,
    databaseReplicas: {
      urls: (settings.DATABASE_REPLICA_URLS ?? '')
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean),
      maxLagMs: settings.DATABASE_REPLICA_MAX_LAG_MS,
      checkIntervalMs: settings.DATABASE_REPLICA_CHECK_INTERVAL_MS,
    },
    // The embedded database is ours to keep current; a real server is migrated on request.
    migrateOnStart: flags.includes('--migrate') || (settings.MIGRATE_ON_START ?? embedded),
    dataDir: path.resolve(settings.DATA_DIR),
    embeddedIdleTimeoutMs: settings.EMBEDDED_DATABASE_IDLE_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: settings.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    logLevel: settings.LOG_LEVEL,
    graphiql: settings.GRAPHIQL ?? !production,
    legacy,
    auth,
    limits: {
      bodyBytes: settings.BODY_LIMIT_BYTES,
      requestTimeoutMs: settings.REQUEST_TIMEOUT_MS,
      statementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS,
      database: {
        connectTimeoutMs: settings.DATABASE_CONNECT_TIMEOUT_MS,
        // Past the server's own statement timeout: a statement the server would cancel gets its
        // TIMEOUT from the server; only a server that stops answering meets this one.
        queryTimeoutMs: settings.DATABASE_QUERY_TIMEOUT_MS ?? settings.DATABASE_STATEMENT_TIMEOUT_MS + 2_000,
        maxWaiting: settings.DATABASE_MAX_WAITING,
        idleTimeoutMs: settings.DATABASE_IDLE_TIMEOUT_MS,
      },
      rateLimit: {
        requests: settings.RATE_LIMIT_REQUESTS,
        windowSeconds: settings.RATE_LIMIT_WINDOW_SECONDS,
        keyPrefix: settings.RATE_LIMIT_KEY_PREFIX,
      },
      maxDepth: settings.MAX_DEPTH,
      maxAliases: settings.MAX_ALIASES,
      maxTokens: settings.MAX_TOKENS,
      maxCost: settings.MAX_COST,
      costBudget: {
        capacity: settings.COST_BUDGET_CAPACITY,
        refillPerSecond: settings.COST_BUDGET_REFILL_PER_SECOND,
        onRedisFailure: settings.COST_BUDGET_ON_REDIS_FAILURE,
      },
      unsizedList: settings.COST_LIST_SIZE,
      costEstimates: settings.COST_ESTIMATES_MAX_ENTRIES,
      maxDirectives: settings.MAX_DIRECTIVES,
      maxBatch: settings.MAX_BATCH,
    },
    redisUrl: settings.REDIS_URL,
    redisTimeouts: { connectTimeoutMs: settings.REDIS_CONNECT_TIMEOUT_MS, commandTimeoutMs: settings.REDIS_COMMAND_TIMEOUT_MS },
    eventsChannelPrefix: settings.EVENTS_CHANNEL_PREFIX,
    responseCache:
      settings.RESPONSE_CACHE_TTL_MS > 0
        ? {
            ttlMs: settings.RESPONSE_CACHE_TTL_MS,
            maxEntries: settings.RESPONSE_CACHE_MAX_ENTRIES,
            maxBytes: settings.RESPONSE_CACHE_MAX_BYTES,
            keyPrefix: `${settings.EVENTS_CHANNEL_PREFIX}response-cache:`,
          }
        : undefined,
    liveQueries:
      settings.LIVE_QUERY_MAX_PER_INSTANCE > 0
        ? {
            minIntervalMs: settings.LIVE_QUERY_MIN_INTERVAL_MS,
            maxPerConnection: settings.LIVE_QUERY_MAX_PER_CONNECTION,
            maxPerClient: settings.LIVE_QUERY_MAX_PER_CLIENT,
            maxPerInstance: settings.LIVE_QUERY_MAX_PER_INSTANCE,
            maxConcurrentRuns: settings.LIVE_QUERY_MAX_CONCURRENT_RUNS,
          }
        : undefined,
    introspection: settings.INTROSPECTION ?? !production,
    federation: settings.FEDERATION,
    trustProxy: settings.TRUST_PROXY ?? false,
    trustedDocuments: trusted,
    queryPlans: settings.GRAPHQL_QUERY_PLANS
      ? { maxEntries: settings.GRAPHQL_PLAN_CACHE_MAX_ENTRIES, maxBytes: settings.GRAPHQL_PLAN_CACHE_MAX_BYTES, ownStatements: settings.GRAPHQL_PLAN_STATEMENTS }
      : undefined,
    documentCache: { maxEntries: settings.GRAPHQL_DOCUMENT_CACHE_MAX_ENTRIES, maxBytes: settings.GRAPHQL_DOCUMENT_CACHE_MAX_BYTES },
    prismaQueryPlanCacheMaxEntries: settings.PRISMA_QUERY_PLAN_CACHE_MAX_ENTRIES,
    persistedQueries: { maxEntries: settings.PERSISTED_QUERIES_MAX_ENTRIES, maxBytes: settings.PERSISTED_QUERIES_MAX_BYTES },
    tokenCacheMaxEntries: settings.TOKEN_CACHE_MAX_ENTRIES,
    metrics: { port: settings.METRICS_PORT, token: settings.METRICS_TOKEN, clientClaim: settings.METRICS_CLIENT_CLAIM },
    shutdownGraceMs: settings.SHUTDOWN_GRACE_MS,
    shutdownDrainMs,
    tracing: {
      enabled:
        !settings.OTEL_SDK_DISABLED &&
        settings.OTEL_TRACES_EXPORTER !== 'none' &&
        (settings.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined),
      defaultServiceName:
        settings.OTEL_SERVICE_NAME === undefined && !/(^|,)\s*service\.name\s*=/.test(settings.OTEL_RESOURCE_ATTRIBUTES ?? '')
          ? 'petstore-gateway'
          : undefined,
      resolverSpans: settings.GRAPHQL_RESOLVER_SPANS,
    },
    corsOrigins: (settings.CORS_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean)
      // As browsers send it in Origin: https://shop.example/ is https://shop.example.
      .map((origin) => (origin === '*' ? origin : new URL(origin).origin)),
  };
}

/** The defaults of every limit, for tests and tools that build a gateway without the environment. */
export const defaultLimits: Limits = loadConfig({}).limits;
