import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { undoLater } from './cleanup.js';
import { deleteKeysUnder } from '../../harness/redis-keys.js';
import { auth, jwtSecret, log, only, peerNode, peersDir, poolSize, resultsDir, root, warnings } from './config.js';
import { benchResponseCacheTtlMs, operations, type TraceLevel, traceRatios, type Variant } from './operations.js';
import { freePort, runCommand, type ServerProcess, startServer } from './processes.js';
import type { BenchResults } from './report.js';

/** The servers under test: building and starting the gateway and PostGraphile, and sending them one request. */

/**
 * The environment of every npm command the bench runs (installs, builds): its own, with the folder of
 * the Node running the bench first on PATH, so that npm itself runs on that Node (Node 24, as .ci/run
 * installs the project) however the bench was started. Scripts npm runs find the package's own
 * node_modules/.bin before it: a folder with its own `node` builds on that one. The rest of npm's
 * configuration from `npm run bench` is kept (the machine's npmrc files are found through it), but
 * not its user agent: it names the Node of that npm, which the postinstall's note would report.
 */
function npmEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter) };
  delete env.npm_config_user_agent;
  return env;
}

/** `npm ci` in `dir`, its output shown as it comes (an install takes minutes); `killAfterMs` as runCommand's. */
export async function npmCi(dir: string, label: string, killAfterMs?: number): Promise<void> {
  const install = await runCommand(
    `npm ci in ${label}`,
    'npm',
    ['ci', '--no-audit', '--no-fund'],
    { cwd: dir, env: npmEnvironment(), stdio: 'inherit' },
    killAfterMs,
  );
  if (install.status !== 0) throw new Error(`npm ci in ${label} failed`);
}

/** The version of `node` (a path), which must be the bench's Node major: side by side means on the same one. */
export function nodeOfSameMajor(node: string, what: string): string {
  const version = execFileSync(node, ['-v'], { encoding: 'utf8' }).trim();
  const major = (v: string) => Number(/^v(\d+)/.exec(v)?.[1]);
  if (major(version) !== major(process.version)) {
    throw new Error(`${what} must run on the gateway's Node major (${process.version}); ${node} is ${version}`);
  }
  return version;
}

export async function ensurePeers(): Promise<string> {
  if (!existsSync(peerNode) || !existsSync(path.join(peersDir, 'node_modules/postgraphile/package.json'))) {
    log('bench/peers is not installed: npm ci in bench/peers (PostGraphile 5 and its Node)…');
    await npmCi(peersDir, 'bench/peers');
  }
  // PostGraphile 5 needs 22 or later anyway.
  return nodeOfSameMajor(peerNode, 'PostGraphile');
}

export async function build(): Promise<BenchResults['build']> {
  if (process.env.BENCH_SKIP_BUILD === '1') {
    warnings.push('BENCH_SKIP_BUILD=1: ran dist/ as it was, without building.');
    return { ok: true, typeErrors: [] };
  }
  return buildGateway(root, 'npm run build');
}

/**
 * `npm run build` in `dir` (the work tree, or a baseline's folder). When tsc reports type errors but
 * still wrote dist/src/main.js, that JavaScript is run, with a warning (BENCH_STRICT_BUILD=1: stop).
 */
export async function buildGateway(dir: string, label: string, killAfterMs?: number): Promise<BenchResults['build']> {
  log(`${label}…`);
  const started = Date.now();
  const result = await runCommand(label, 'npm', ['run', 'build'], { cwd: dir, env: npmEnvironment() }, killAfterMs);
  if (result.status === 0) return { ok: true, typeErrors: [] };
  const output = result.output;
  const typeErrors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  const main = path.join(dir, 'dist/src/main.js');
  const emitted = existsSync(main) && statSync(main).mtimeMs >= started - 1000;
  if (!emitted || typeErrors.length === 0 || process.env.BENCH_STRICT_BUILD === '1') {
    throw new Error(`${label} failed:\n${output}`);
  }
  // tsc still writes the JavaScript when the types do not check; say so loudly and go on.
  const warning = `${label} reported ${typeErrors.length} type error(s); benchmarked the JavaScript it emitted anyway: ${typeErrors.join('; ')}`;
  warnings.push(warning);
  log(`WARNING: ${warning}`);
  return { ok: false, typeErrors };
}

export function packageVersion(dir: string, name: string): string {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

export function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/**
 * The shell's environment (so a setting can be tried, e.g. MAX_COST=…), without
 * the keys the bench sets itself, plus the bench's own: its JWT key, and a rate
 * limit the load cannot reach (the limiter still runs, one client at
 * 1,000,000 requests a second), since every autocannon connection is one client,
 * and a cost budget it cannot spend either (the budget is still taken and refilled
 * on every request: its cost is in every row).
 */
function gatewayEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ['AUTH_JWKS_URL', 'AUTH_ISSUER', 'AUTH_AUDIENCE', 'REDIS_URL']) delete env[key];
  // Traces only where a row asks for them (tracingSettings): the others are measured untraced.
  for (const key of Object.keys(env)) if (key.startsWith('OTEL_')) delete env[key];
  return {
    ...env,
    AUTH_JWT_SECRET: jwtSecret,
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_WINDOW_SECONDS: '1',
    COST_BUDGET_CAPACITY: '100000000',
    // Budgets that never run out: a cached cell serves thousands of answers a second, each paid for.
    COST_BUDGET_REFILL_PER_SECOND: '1000000000',
  };
}

/** The node flags production runs the gateway with: those of the build's package.json's start:prod. */
function productionNodeFlags(dir: string): string[] {
  const script: string = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts['start:prod'];
  const flags = /\bnode((?:\s+--\S+)*)\s+dist\/src\/main\.js/.exec(script)?.[1];
  if (flags === undefined) throw new Error(`package.json's start:prod does not run node dist/src/main.js: ${script}`);
  return flags.trim().split(/\s+/).filter(Boolean);
}

/** A built gateway: the folder holding its package.json and dist/, and the node that runs it. */
export interface GatewayBuild {
  dir: string;
  node: string;
  /**
   * Settings of this build's gateways only (BENCH_BASELINE_SETTINGS, BENCH_CURRENT_SETTINGS): over
   * the environment and the bench's own, under those that make a row what it is (FEDERATION=true…).
   */
  settings?: Record<string, string>;
}

/** The work tree's build, run by the Node that runs the bench. */
export const currentBuild: GatewayBuild = { dir: root, node: process.execPath };

/**
 * The built gateway as production runs it, on `url`, or on the embedded default when `url` is
 * undefined (then `settings` should give it a DATA_DIR; it migrates and seeds that itself).
 */
export async function startGateway(
  url: string | undefined,
  name: string,
  nodeArgs: string[] = [],
  settings: Record<string, string> = {},
  build: GatewayBuild = currentBuild,
): Promise<ServerProcess> {
  const port = await freePort();
  const env = gatewayEnvironment();
  delete env.DATABASE_URL;
  return startServer({
    name,
    command: build.node,
    args: [...productionNodeFlags(build.dir), ...nodeArgs, 'dist/src/main.js'],
    cwd: build.dir,
    env: {
      ...env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      // No load balancer to drain: production's 5 s wait would only slow every stop and clean-up.
      SHUTDOWN_DRAIN_MS: '0',
      ...(url === undefined ? {} : { DATABASE_URL: url, DATABASE_POOL_SIZE: String(poolSize), MIGRATE_ON_START: 'false' }),
      ...build.settings,
      ...settings,
    },
    url: `http://127.0.0.1:${port}`,
    logFile: path.join(resultsDir, `${name}.log.tmp`),
  });
}

/**
 * The gateways of one pass: the gateway, and those started with a setting of their own when a
 * selected operation is sent to them (BENCH_ONLY may leave them out): its response cache on, as a
 * Federation subgraph, estimating every cost afresh, sending traces.
 */
export type Gateways = Record<'gateway', ServerProcess> & {
  cachedGateway?: ServerProcess;
  sharedCacheGateway?: ServerProcess;
  federationGateway?: ServerProcess;
  uncostedGateway?: ServerProcess;
  sampledTracesGateway?: ServerProcess;
  allTracesGateway?: ServerProcess;
};
/** The gateways and PostGraphile. */
export type Servers = Gateways & Record<'postgraphile', ServerProcess>;
const needsGateway = (kind: 'responseCache' | 'sharedCache' | 'federation' | 'uncachedCost') =>
  // A row on the shared cache's gateway (responseCache too, for its hits to be counted) needs no other cached one.
  operations.some((o) => o.gateway[kind] && !(kind === 'responseCache' && o.gateway.sharedCache) && (!only || only.includes(o.id)));
const needsTraces = (level: TraceLevel) => operations.some((o) => o.gateway.traces === level && (!only || only.includes(o.id)));
const tracedGatewayKey = { sampled: 'sampledTracesGateway', all: 'allTracesGateway' } as const;
export const serverFor = (servers: Gateways & Partial<Servers>, variant: Variant): ServerProcess => {
  if (variant.traces) {
    const server = servers[tracedGatewayKey[variant.traces]];
    if (!server) throw new Error(`${variant.key} needs the gateway that sends traces`);
    return server;
  }
  if (variant.federation) {
    if (!servers.federationGateway) throw new Error(`${variant.key} needs the gateway with FEDERATION=true`);
    return servers.federationGateway;
  }
  if (variant.sharedCache) {
    if (!servers.sharedCacheGateway) throw new Error(`${variant.key} needs the gateway with its response cache on and Redis`);
    return servers.sharedCacheGateway;
  }
  if (variant.uncachedCost) {
    if (!servers.uncostedGateway) throw new Error(`${variant.key} needs the gateway with COST_ESTIMATES_MAX_ENTRIES=0`);
    return servers.uncostedGateway;
  }
  if (!variant.responseCache) {
    const server = servers[variant.target];
    if (!server) throw new Error(`${variant.key} needs ${variant.target}, which this pass did not start`);
    return server;
  }
  if (!servers.cachedGateway) throw new Error(`${variant.key} needs the gateway with its response cache on`);
  return servers.cachedGateway;
};

export async function startServers(url: string, suffix: string, gatewayArgs: string[] = []): Promise<Servers> {
  return {
    ...(await startGateways(url, suffix, gatewayArgs)),
    postgraphile: await startPostGraphile(url, `postgraphile${suffix}`),
  };
}

export async function startGateways(url: string, suffix: string, gatewayArgs: string[] = [], build: GatewayBuild = currentBuild): Promise<Gateways> {
  const start = (name: string, settings: Record<string, string> = {}) => startGateway(url, `${name}${suffix}`, gatewayArgs, settings, build);
  return {
    gateway: await start('gateway'),
    ...(needsGateway('responseCache')
      ? { cachedGateway: await start('gateway-cached', { RESPONSE_CACHE_TTL_MS: String(benchResponseCacheTtlMs) }) }
      : {}),
    ...(needsGateway('sharedCache')
      ? {
          sharedCacheGateway: await start('gateway-cached-redis', {
            RESPONSE_CACHE_TTL_MS: String(benchResponseCacheTtlMs),
            ...(await sharedRedis('load', 'the shared cache row ran with everything in process')),
          }),
        }
      : {}),
    // A subgraph of its own, so that every other row measures the standalone gateway as it is deployed.
    ...(needsGateway('federation') ? { federationGateway: await start('gateway-federation', { FEDERATION: 'true' }) } : {}),
    ...(needsGateway('uncachedCost') ? { uncostedGateway: await start('gateway-uncosted', { COST_ESTIMATES_MAX_ENTRIES: '0' }) } : {}),
    ...Object.fromEntries(
      await Promise.all(
        (['sampled', 'all'] as const)
          .filter(needsTraces)
          .map(async (level) => [tracedGatewayKey[level], await start(`gateway-traces-${level}`, await tracingSettings(level))]),
      ),
    ),
  };
}

let sink: Promise<string> | undefined;
/**
 * An OTLP/HTTP endpoint in the bench process that takes every export and discards it, answering
 * at once as a healthy collector would (what it costs the bench process is not the gateway's).
 */
function otlpSink(): Promise<string> {
  sink ??= new Promise((resolve) => {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    server.unref();
  });
  return sink;
}

/** The OTEL_* settings of a traced gateway: nothing but the standard variables, to the sink. */
async function tracingSettings(level: TraceLevel): Promise<Record<string, string>> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink(),
    OTEL_SERVICE_NAME: 'petstore-bench',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: traceRatios[level],
  };
}

/** Response-cache lookups so far (petstore_response_cache_lookups_total), from the gateway's /metrics. */
export async function cacheLookups(server: ServerProcess) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const count = (result: string) =>
    Number(new RegExp(`^petstore_response_cache_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  // An answer another instance computed (found in Redis) is a hit too.
  return { hits: count('hit') + count('peer'), misses: count('miss') };
}

export async function startPostGraphile(url: string, name: string): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name,
    command: peerNode,
    args: ['postgraphile-server.mjs'],
    cwd: peersDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      GRAPHILE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: String(poolSize),
    },
    url: `http://127.0.0.1:${port}`,
    logFile: path.join(resultsDir, `${name}.log.tmp`),
  });
}

export function headersFor(variant: Variant): Record<string, string> {
  return {
    accept: 'application/json',
    ...(variant.target === 'gateway' && variant.needsToken && auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
  };
}

export function requestOf(variant: Variant, fixed = false): { method: 'GET' | 'POST'; path: string; body?: string } {
  if (variant.kind === 'rest') return { method: 'GET', path: variant.restPath?.(fixed) ?? '/' };
  return {
    method: 'POST',
    path: '/graphql',
    body: JSON.stringify({ query: variant.query, variables: variant.variables?.(fixed) ?? {} }),
  };
}

export async function send(server: ServerProcess, variant: Variant, fixed = false) {
  await variant.supply?.({ requests: 1, url: server.url });
  const request = requestOf(variant, fixed);
  const response = await fetch(`${server.url}${request.path}`, {
    method: request.method,
    headers: { ...headersFor(variant), ...(request.body ? { 'content-type': 'application/json' } : {}) },
    body: request.body,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** Whether Redis at `url` answers a PING within a second. */
async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * The settings of gateways that share Redis as instances of one deployment do (BENCH_REDIS_URL: the
 * response cache's write log and answers, rate limits, cost budgets, write notices), under a
 * channel prefix of their own; none, with a warning saying what `pass` did instead, when it does not answer.
 * What the gateways leave under the prefix (the write log's sequence has no expiry) goes at the end of the run.
 */
export async function sharedRedis(pass: string, without: string): Promise<Record<string, string>> {
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await redisAnswers(url))) {
    warnings.push(`${pass}: no Redis at ${url} (BENCH_REDIS_URL): ${without}`);
    return {};
  }
  const prefix = `bench:${randomUUID()}:`;
  undoLater(`Redis keys under ${prefix}`, () => deleteKeysUnder(url, prefix));
  return { REDIS_URL: url, EVENTS_CHANNEL_PREFIX: prefix };
}

