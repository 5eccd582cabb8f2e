/**
 * npm run bench: the gateway and PostGraphile 5 side by side, in one run, on one database.
 *
 *  1. Installs bench/peers (PostGraphile 5 + Node 22) with `npm ci` if it is not installed.
 *  2. Builds the gateway (npm run build).
 *  3. Creates its own database on the configured PostgreSQL (BENCH_DATABASE_URL, default
 *     postgresql://postgres@127.0.0.1:5432/postgres as the admin URL), migrates it with
 *     applyPendingMigrations, loads 50 categories, 10,000 pets with inventory, 50,000 orders.
 *  4. Counting pass: the servers (the gateway, also with its response cache on when a selected
 *     operation needs it, and PostGraphile) run against a wire-protocol counter in front of PostgreSQL;
 *     each variant is checked (status, GraphQL errors, same data on both sides) and its SQL
 *     statements and rows per request counted over sequential requests.
 *  5. Load pass: the same servers, started afresh straight on PostgreSQL, are driven with autocannon
 *     for a fixed duration per concurrency level after a warm-up.
 *  6. Writes bench/results/latest.json and latest.md, prints the table, stops the servers and
 *     drops the database (also on failure or Ctrl-C).
 *
 * Settings (environment): BENCH_DURATION (s per cell, 8), BENCH_WARMUP (s per variant, 5),
 * BENCH_CONCURRENCY (1,10,50), BENCH_COUNT_REQUESTS (20), BENCH_ONLY (operation ids, e.g. 1,2),
 * BENCH_DATABASE_URL, BENCH_AUTH_TOKEN (the bearer token for orders and placeOrder; by default the bench
 * configures the gateway with a JWT key of its own and signs one), BENCH_SKIP_BUILD=1,
 * BENCH_STRICT_BUILD=1 (stop when the build reports type errors instead of benchmarking what it emitted),
 * BENCH_GATEWAY_NODE_ARGS (extra node flags for the load-pass gateway, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 * BENCH_OUTPUT (basename of the result files, latest by default; use another for experiments).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { allScopes } from '../src/auth/scopes.js';
import { applyPendingMigrations } from '../src/migrations/migrations.js';
import {
  adminUrl,
  createDatabase,
  databaseUrl,
  dataSet,
  dropDatabase,
  leftoverDatabases,
  loadData,
  placeOrderFunction,
  withClient,
} from './lib/data.js';
import {
  benchResponseCacheTtlMs,
  type Operation,
  operations,
  postGraphileFields,
  type Variant,
} from './lib/operations.js';
import { PgWireCounter } from './lib/pg-wire-counter.js';
import {
  BackendCpu,
  cpuMs,
  freePort,
  machineCpu,
  memoryMb,
  type ServerProcess,
  startServer,
  stopAll,
  tail,
} from './lib/processes.js';
import { type BenchResults, type CellResult, renderMarkdown, type VariantResult } from './lib/report.js';

const root = path.resolve(import.meta.dirname, '..');
const peersDir = path.join(root, 'bench/peers');
const resultsDir = path.join(root, 'bench/results');
const peerNode = path.join(peersDir, 'node_modules/.bin/node');
const poolSize = 10;

const numberSetting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const settings = {
  durationS: numberSetting('BENCH_DURATION', 8),
  warmupS: numberSetting('BENCH_WARMUP', 5),
  concurrency: (process.env.BENCH_CONCURRENCY ?? '1,10,50').split(',').map((c) => Number.parseInt(c, 10)),
  countRequests: numberSetting('BENCH_COUNT_REQUESTS', 20),
};
const only = process.env.BENCH_ONLY?.split(',').map((id) => id.trim());
/**
 * The gateway in production verifies bearer tokens with a configured key: the
 * bench gives it a key of its own (HS256) and signs one token with every scope,
 * sent only on the requests that need one (orders, placeOrder). BENCH_AUTH_TOKEN
 * replaces that token (for a gateway configured otherwise).
 */
const jwtSecret = randomBytes(32).toString('base64url');
let authToken = process.env.BENCH_AUTH_TOKEN;
/** Extra flags for the load-pass gateway's node, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof. */
/** Basename of the result files in bench/results (latest.json, latest.md by default). */
const outputName = process.env.BENCH_OUTPUT ?? 'latest';
const gatewayNodeArgs = process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const warnings: string[] = [];
const startedAt = new Date();
const loadAtStart = os.loadavg().map((value) => Number(value.toFixed(2)));
const log = (message: string) => console.log(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)} s] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- clean-up, also on failure and Ctrl-C ---------------------------------

let databaseName: string | undefined;
let counter: PgWireCounter | undefined;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll().catch((error) => console.error('stopping the servers:', error));
    await counter?.close().catch(() => {});
    if (databaseName) {
      await dropDatabase(databaseName).then(
        () => log(`dropped database ${databaseName}`),
        (error) => console.error(`could not drop database ${databaseName}:`, error),
      );
    }
  })();
  return cleaning;
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    // A terminal's Ctrl-C reaches us twice (directly, and relayed by tsx); say it once.
    if (!cleaning) console.error(`\n${signal}: stopping the servers and dropping the bench database…`);
    void cleanup().finally(() => process.exit(code));
  });
}

// ---- set-up ---------------------------------------------------------------

function ensurePeers(): string {
  if (!existsSync(peerNode) || !existsSync(path.join(peersDir, 'node_modules/postgraphile/package.json'))) {
    log('bench/peers is not installed: npm ci in bench/peers (PostGraphile 5, Node 22)…');
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: peersDir, stdio: 'inherit' });
    if (install.status !== 0) throw new Error('npm ci in bench/peers failed');
  }
  const version = execFileSync(peerNode, ['-v'], { encoding: 'utf8' }).trim();
  if (Number(/^v(\d+)/.exec(version)?.[1]) < 22) throw new Error(`PostGraphile 5 needs Node >= 22; ${peerNode} is ${version}`);
  return version;
}

function build(): BenchResults['build'] {
  if (process.env.BENCH_SKIP_BUILD === '1') {
    warnings.push('BENCH_SKIP_BUILD=1: benchmarked dist/ as it was, without building.');
    return { ok: true, typeErrors: [] };
  }
  log('npm run build…');
  const started = Date.now();
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
  if (result.status === 0) return { ok: true, typeErrors: [] };
  const output = `${result.stdout}${result.stderr}`;
  const typeErrors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  const main = path.join(root, 'dist/src/main.js');
  const emitted = existsSync(main) && statSync(main).mtimeMs >= started - 1000;
  if (!emitted || typeErrors.length === 0 || process.env.BENCH_STRICT_BUILD === '1') {
    throw new Error(`npm run build failed:\n${output}`);
  }
  // tsc still writes the JavaScript when the types do not check; say so loudly and go on.
  const warning = `npm run build reported ${typeErrors.length} type error(s); benchmarked the JavaScript it emitted anyway: ${typeErrors.join('; ')}`;
  warnings.push(warning);
  log(`WARNING: ${warning}`);
  return { ok: false, typeErrors };
}

function packageVersion(dir: string, name: string): string {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

// ---- servers --------------------------------------------------------------

/**
 * The shell's environment (so a setting can be tried, e.g. MAX_COST=…), without
 * the keys the bench sets itself, plus the bench's own: its JWT key, and a rate
 * limit the load cannot reach (the limiter still runs, one client at
 * 1,000,000 requests a second), since every autocannon connection is one client.
 */
function gatewayEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ['AUTH_JWKS_URL', 'AUTH_ISSUER', 'AUTH_AUDIENCE', 'REDIS_URL']) delete env[key];
  return {
    ...env,
    AUTH_JWT_SECRET: jwtSecret,
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_WINDOW_SECONDS: '1',
  };
}

async function startGateway(
  url: string,
  name: string,
  nodeArgs: string[] = [],
  settings: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name,
    command: process.execPath,
    args: [...nodeArgs, 'dist/src/main.js'],
    cwd: root,
    env: {
      ...gatewayEnvironment(),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: String(poolSize),
      MIGRATE_ON_START: 'false',
      ...settings,
    },
    url: `http://127.0.0.1:${port}`,
    logFile: path.join(resultsDir, `${name}.log.tmp`),
  });
}

/**
 * The servers of one pass: the gateway, PostGraphile, and the gateway with its response cache on
 * when a selected operation is sent to it (BENCH_ONLY may leave it out).
 */
type Servers = Record<'gateway' | 'postgraphile', ServerProcess> & { cachedGateway?: ServerProcess };
const needsCachedGateway = () => operations.some((o) => o.gateway.responseCache && (!only || only.includes(o.id)));
const serverFor = (servers: Servers, variant: Variant): ServerProcess => {
  if (!variant.responseCache) return servers[variant.target];
  if (!servers.cachedGateway) throw new Error(`${variant.key} needs the gateway with its response cache on`);
  return servers.cachedGateway;
};

async function startServers(url: string, suffix: string, gatewayArgs: string[] = []): Promise<Servers> {
  return {
    gateway: await startGateway(url, `gateway${suffix}`, gatewayArgs),
    ...(needsCachedGateway()
      ? {
          cachedGateway: await startGateway(url, `gateway-cached${suffix}`, gatewayArgs, {
            RESPONSE_CACHE_TTL_MS: String(benchResponseCacheTtlMs),
          }),
        }
      : {}),
    postgraphile: await startPostGraphile(url, `postgraphile${suffix}`),
  };
}

/** Response-cache lookups so far (petstore_response_cache_lookups_total), from the gateway's /metrics. */
async function cacheLookups(server: ServerProcess) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const count = (result: string) =>
    Number(new RegExp(`^petstore_response_cache_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { hits: count('hit'), misses: count('miss') };
}

async function startPostGraphile(url: string, name: string): Promise<ServerProcess> {
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

function headersFor(variant: Variant): Record<string, string> {
  return {
    accept: 'application/json',
    ...(variant.target === 'gateway' && variant.needsToken && authToken ? { authorization: `Bearer ${authToken}` } : {}),
  };
}

function requestOf(variant: Variant, fixed = false): { method: 'GET' | 'POST'; path: string; body?: string } {
  if (variant.kind === 'rest') return { method: 'GET', path: variant.restPath?.(fixed) ?? '/' };
  return {
    method: 'POST',
    path: '/graphql',
    body: JSON.stringify({ query: variant.query, variables: variant.variables?.(fixed) ?? {} }),
  };
}

async function send(server: ServerProcess, variant: Variant, fixed = false) {
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

// ---- the counting pass ----------------------------------------------------

async function checkPostGraphileSchema(server: ServerProcess): Promise<string[]> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: '{ __schema { types { name fields { name } } } }' }),
  });
  const body = (await response.json()) as { data?: { __schema: { types: Array<{ name: string; fields: Array<{ name: string }> | null }> } } };
  const fields = new Set(
    (body.data?.__schema.types ?? []).flatMap((type) => (type.fields ?? []).map((field) => `${type.name}.${field.name}`)),
  );
  return postGraphileFields.map(([type, field]) => `${type}.${field}`).filter((name) => !fields.has(name));
}

async function countingPass(
  url: string,
  variants: Variant[],
  results: Record<string, VariantResult>,
  normalized: Map<string, unknown>,
) {
  const admin = new URL(adminUrl);
  counter = new PgWireCounter({ host: admin.hostname, port: Number(admin.port || 5432) });
  const proxyPort = await counter.listen();
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxyPort);
  log(`counting pass: the servers through the wire counter on 127.0.0.1:${proxyPort}`);
  const servers = await startServers(proxied.toString(), '-counting');

  const missing = await checkPostGraphileSchema(servers.postgraphile);
  const placeOrderFields = new Set(['Mutation.benchPlaceOrder', 'BenchPlaceOrderPayload.result']);
  if (missing.some((name) => !placeOrderFields.has(name))) {
    throw new Error(`PostGraphile's schema lacks fields the benchmark's queries use: ${missing.join(', ')}`);
  }

  for (const variant of variants) {
    const result: VariantResult = {
      key: variant.key,
      target: variant.target,
      label: variant.label,
      kind: variant.kind,
      available: true,
    };
    results[variant.key] = result;
    if (variant.key === 'postgraphile:place-order' && missing.length) {
      Object.assign(result, { available: false, reason: `PostGraphile's schema lacks ${missing.join(', ')}` });
      continue;
    }
    const server = serverFor(servers, variant);
    const first = await send(server, variant, true);
    const graphqlErrors = (first.json as { errors?: unknown } | undefined)?.errors;
    result.sample = { status: first.status, bytes: Buffer.byteLength(first.text), ...(graphqlErrors ? { graphqlErrors } : {}) };
    if (variant.kind === 'rest' && first.status === 404) {
      result.available = false;
      result.reason = `GET ${requestOf(variant, true).path} answered 404 (${first.text.slice(0, 100)})`;
      log(`  ${variant.key}: n/a (${result.reason})`);
      continue;
    }
    if (first.status >= 300 || graphqlErrors) {
      const warning = `${variant.key}: the check request answered ${first.status}${graphqlErrors ? ` with GraphQL errors ${JSON.stringify(graphqlErrors).slice(0, 300)}` : ''}; measured anyway, see its error counts`;
      warnings.push(warning);
      log(`  WARNING: ${warning}`);
    }
    if (variant.normalize && first.json !== undefined) normalized.set(variant.key, variant.normalize(first.json));

    for (let i = 0; i < 3; i++) await send(server, variant);
    await sleep(100);
    const before = counter.snapshot();
    for (let i = 0; i < settings.countRequests; i++) await send(server, variant);
    await sleep(100);
    const after = counter.snapshot();
    const n = settings.countRequests;
    result.perRequest = {
      requests: n,
      statements: (after.statements - before.statements) / n,
      dataStatements: (after.dataStatements - before.dataStatements) / n,
      rows: (after.rows - before.rows) / n,
    };
    counter.startRecording();
    await send(server, variant, true);
    await sleep(100);
    result.statements = counter.stopRecording();
    log(
      `  ${variant.key}: ${result.perRequest.statements} statements/request ` +
        `(${result.perRequest.dataStatements} without transaction control), ${result.perRequest.rows} rows/request`,
    );
  }
  if (counter.opaqueConnections) warnings.push('Some database connections were encrypted; their statements were not counted.');

  for (const server of Object.values(servers)) await server.stop();
  await counter.close();
  counter = undefined;
}

// ---- the load pass --------------------------------------------------------

interface AutocannonResult {
  duration: number;
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  statusCodeStats?: Record<string, { count?: number }>;
}

async function drive(server: ServerProcess, variant: Variant, connections: number, durationS: number) {
  const request = requestOf(variant);
  const headers = {
    ...headersFor(variant),
    ...(request.body ? { 'content-type': 'application/json' } : {}),
  };
  const options = {
    url: server.url,
    connections,
    duration: durationS,
    pipelining: 1,
    timeout: 10,
    requests: [
      {
        method: request.method,
        path: request.path,
        headers,
        ...(request.body ? { body: request.body } : {}),
        ...(variant.randomized
          ? { setupRequest: (req: Record<string, unknown>) => ({ ...req, ...requestOf(variant) }) }
          : {}),
      },
    ],
    // A GraphQL error comes with 200: count those answers as errors too.
    ...(variant.kind === 'graphql' ? { verifyBody: (body: string) => !body.includes('"errors"') } : {}),
  };
  return (await autocannon(options as unknown as autocannon.Options)) as unknown as AutocannonResult;
}

async function cell(server: ServerProcess, variant: Variant, connections: number, backend: BackendCpu): Promise<CellResult> {
  const lookupsBefore = variant.responseCache ? await cacheLookups(server) : undefined;
  const cpuBefore = cpuMs(server.pid);
  const machineBefore = machineCpu();
  const selfBefore = process.cpuUsage();
  const wallBefore = performance.now();
  backend.start();
  const sampler = setInterval(() => backend.sample(), 1000);
  const result = await drive(server, variant, connections, settings.durationS);
  clearInterval(sampler);
  const postgresMs = backend.available ? backend.elapsed() : null;
  const cpuAfter = cpuMs(server.pid);
  const machineAfter = machineCpu();
  // After the CPU readings, so that answering /metrics is not counted as work of the cell.
  const lookupsAfter = lookupsBefore ? await cacheLookups(server) : undefined;
  const hits = lookupsBefore && lookupsAfter ? lookupsAfter.hits - lookupsBefore.hits : 0;
  const misses = lookupsBefore && lookupsAfter ? lookupsAfter.misses - lookupsBefore.misses : 0;
  const self = process.cpuUsage(selfBefore);
  const loadGeneratorMs = (self.user + self.system) / 1000;
  const wallMs = performance.now() - wallBefore;
  const serverMs = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : null;
  // /proc/stat counts in USER_HZ (100 per second) over all CPUs.
  const machineBusyMs = ((machineAfter.busy - machineBefore.busy) * 1000) / 100;
  const otherMs = machineBusyMs - (serverMs ?? 0) - (postgresMs ?? 0) - loadGeneratorMs;
  const memory = memoryMb(server.pid);
  const requests = result.requests.total;
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]),
  );
  return {
    variant: variant.key,
    target: variant.target,
    concurrency: connections,
    durationS: result.duration,
    requests,
    requestsPerSecond: result.requests.average,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    graphqlErrors: result.mismatches,
    statusCodes,
    serverCpuMsPerRequest: serverMs !== null && requests ? serverMs / requests : null,
    postgresCpuMsPerRequest: postgresMs !== null && requests ? postgresMs / requests : null,
    machineCpuBusyPercent:
      (100 * (machineAfter.busy - machineBefore.busy)) / Math.max(1, machineAfter.total - machineBefore.total),
    loadGeneratorCpuPercent: (100 * loadGeneratorMs) / (wallMs * os.availableParallelism()),
    otherProcessesCpuPercent: (100 * Math.max(0, otherMs)) / (wallMs * os.availableParallelism()),
    ...(lookupsBefore ? { responseCache: { hits, misses } } : {}),
    serverRssMb: memory?.rss ?? null,
    serverPeakRssMbSoFar: memory?.peakRss ?? null,
  };
}

/** Consecutive operations that share their PostGraphile variant are measured together, PostGraphile once. */
function groups(selected: Operation[]): Variant[][] {
  const result: Variant[][] = [];
  let lastPeer: string | undefined;
  for (const operation of selected) {
    const peer = operation.postgraphile;
    const group = peer && peer.key === lastPeer ? result[result.length - 1] : undefined;
    if (group) {
      group.splice(group.length - 1, 0, operation.gateway);
    } else {
      result.push(peer ? [operation.gateway, peer] : [operation.gateway]);
    }
    lastPeer = peer?.key;
  }
  return result;
}

// ---- main -----------------------------------------------------------------

async function main() {
  mkdirSync(resultsDir, { recursive: true });
  const selected = operations.filter((operation) => !only || only.includes(operation.id));
  if (selected.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no operation`);
  const peerNodeVersion = ensurePeers();
  authToken ??= await new SignJWT({ scope: allScopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('3h')
    .sign(new TextEncoder().encode(jwtSecret));
  const buildResult = build();
  // What was built: the commit, and whether the working tree differed from it at that moment.
  const built = { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--', 'src', 'prisma']).length > 0 };

  const { postgresVersion, preload } = await withClient(adminUrl, async (admin) => ({
    postgresVersion: (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?',
    preload: (await admin.query<{ shared_preload_libraries: string }>('SHOW shared_preload_libraries')).rows[0]
      ?.shared_preload_libraries,
  }));
  databaseName = await createDatabase();
  const url = databaseUrl(databaseName);
  const leftovers = await leftoverDatabases(databaseName);
  if (leftovers.length) {
    warnings.push(`Databases left by earlier interrupted runs (drop them when no run is going): ${leftovers.join(', ')}`);
  }
  log(`database ${databaseName}: migrating`);
  const applied = await applyPendingMigrations(url);
  log(`applied ${applied.join(', ')}; loading the data set`);
  await loadData(url);
  await withClient(url, (db) => db.query(placeOrderFunction));
  log('data loaded');

  const variants = [
    ...new Map(selected.flatMap((o) => [o.gateway, ...(o.postgraphile ? [o.postgraphile] : [])]).map((v) => [v.key, v])).values(),
  ];
  const variantResults: Record<string, VariantResult> = {};
  const normalized = new Map<string, unknown>();
  await countingPass(url, variants, variantResults, normalized);

  const operationResults = selected.map((operation) => {
    const a = normalized.get(operation.gateway.key);
    const b = operation.postgraphile ? normalized.get(operation.postgraphile.key) : undefined;
    let sameData: boolean | null = null;
    let sameDataDetail: string | undefined;
    if (a !== undefined && b !== undefined) {
      sameData = JSON.stringify(a) === JSON.stringify(b);
      if (!sameData) {
        sameDataDetail = `gateway ${JSON.stringify(a).slice(0, 200)} … PostGraphile ${JSON.stringify(b).slice(0, 200)}`;
        warnings.push(`${operation.id}: the gateway and PostGraphile answered with different data`);
      }
    }
    return {
      id: operation.id,
      title: operation.title,
      gateway: operation.gateway.key,
      postgraphile: operation.postgraphile?.key ?? null,
      ...(operation.note ? { note: operation.note } : {}),
      sameData,
      ...(sameDataDetail ? { sameDataDetail } : {}),
    };
  });

  log('load pass: starting the servers straight on PostgreSQL');
  const servers = await startServers(url, '', gatewayNodeArgs);
  await sleep(1000);
  const rssAtStartMb = {
    gateway: memoryMb(servers.gateway.pid)?.rss ?? null,
    ...(servers.cachedGateway ? { cachedGateway: memoryMb(servers.cachedGateway.pid)?.rss ?? null } : {}),
    postgraphile: memoryMb(servers.postgraphile.pid)?.rss ?? null,
  };
  const backend = new BackendCpu(databaseName);
  const cells: CellResult[] = [];
  const mid = settings.concurrency.includes(10) ? 10 : (settings.concurrency[0] ?? 1);
  for (const group of groups(selected)) {
    const measured = group.filter((variant) => variantResults[variant.key]?.available);
    for (const variant of measured) {
      log(`warm-up ${variant.key} (${settings.warmupS} s at c=${mid})`);
      await drive(serverFor(servers, variant), variant, mid, settings.warmupS);
    }
    for (const c of settings.concurrency) {
      for (const variant of measured) {
        const result = await cell(serverFor(servers, variant), variant, c, backend);
        cells.push(result);
        const errors = result.errors + result.non2xx + result.graphqlErrors;
        log(
          `${variant.key.padEnd(26)} c=${String(c).padEnd(3)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${result.latencyMs.p50} ms  p99 ${result.latencyMs.p99} ms  errors ${errors}  ` +
            `cpu ${result.serverCpuMsPerRequest?.toFixed(2)} ms/req  pg ${result.postgresCpuMsPerRequest?.toFixed(2)} ms/req`,
        );
      }
    }
  }
  const peakRssMb = {
    gateway: memoryMb(servers.gateway.pid)?.peakRss ?? null,
    ...(servers.cachedGateway ? { cachedGateway: memoryMb(servers.cachedGateway.pid)?.peakRss ?? null } : {}),
    postgraphile: memoryMb(servers.postgraphile.pid)?.peakRss ?? null,
  };
  for (const server of Object.values(servers)) {
    const lines = tail(server.logFile, 5);
    if (lines) log(`${server.name} log (last lines):\n${lines}`);
  }

  const finishedAt = new Date();
  const results: BenchResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    wallClockS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    settings,
    machine: {
      nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
      cpuModel: os.cpus()[0]?.model.trim() ?? '?',
      memoryGb: os.totalmem() / 1024 ** 3,
      kernel: os.release(),
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: os.loadavg().map((value) => Number(value.toFixed(2))),
    },
    software: {
      gatewayNode: process.version,
      postgraphileNode: peerNodeVersion,
      postgraphile: packageVersion(peersDir, 'postgraphile'),
      grafserv: packageVersion(peersDir, 'grafserv'),
      grafast: packageVersion(peersDir, 'grafast'),
      graphqlYoga: packageVersion(root, 'graphql-yoga'),
      pothos: packageVersion(root, '@pothos/core'),
      pothosPrisma: packageVersion(root, '@pothos/plugin-prisma'),
      prismaClient: packageVersion(root, '@prisma/client'),
      autocannon: packageVersion(root, 'autocannon'),
      postgres: postgresVersion,
      poolSize: String(poolSize),
      gatewaySettings: process.env.BENCH_AUTH_TOKEN
        ? 'bearer token from BENCH_AUTH_TOKEN on orders and placeOrder, rate limit 1,000,000/s'
        : 'HS256 bearer token (bench key) verified on orders and placeOrder requests, rate limiter on at 1,000,000 requests/s',
    },
    git: built,
    build: buildResult,
    counting: {
      method:
        'a PostgreSQL wire-protocol counter (bench/lib/pg-wire-counter.ts) between each server and the database, ' +
        'in a separate pass with its own server processes: every CommandComplete/ErrorResponse is one statement ' +
        '(BEGIN/COMMIT included, and also reported without them), every DataRow one row; per request = total over ' +
        `${settings.countRequests} sequential requests ÷ ${settings.countRequests}.`,
      pgStatStatements: preload?.includes('pg_stat_statements')
        ? 'preloaded on this server, not used (the wire count treats both servers alike)'
        : `not usable here (shared_preload_libraries is "${preload ?? ''}"; loading it needs a restart of the shared PostgreSQL server)`,
    },
    dataSet: { ...dataSet },
    operations: operationResults,
    variants: variantResults,
    cells,
    peakRssMb,
    rssAtStartMb,
    warnings,
  };
  const markdown = renderMarkdown(results);
  writeFileSync(path.join(resultsDir, `${outputName}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, `${outputName}.md`), markdown);
  console.log(`\n${markdown}`);
  log(
    `wrote bench/results/${outputName}.json and bench/results/${outputName}.md (${(results.wallClockS / 60).toFixed(1)} min)`,
  );
}

try {
  await main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
