import os from 'node:os';
import autocannon from 'autocannon';
import { gatewayNodeArgs, levelsFromTen, log, settings, sleep, warnings } from './config.js';
import { adminUrl, dataScale } from './data.js';
import { type Operation, postGraphileFields, type Variant } from './operations.js';
import { PgWireCounter } from './pg-wire-counter.js';
import { BackendCpu, cpuMs, machineCpu, memoryMb, type ServerProcess, tail } from './processes.js';
import type { CellResult, VariantResult } from './report.js';
import type { PageRounds } from './results.js';
import { cacheLookups, headersFor, requestOf, send, serverFor, startServers } from './servers.js';
import { TENFOLD_SCALE } from './tenfold.js';

/**
 * The matrix: which variants run, in what order, at which concurrency, and what is measured
 * in each pass (statements and rows through the wire counter; throughput, latency and CPU under load).
 */

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

/** A wire counter in front of the bench's PostgreSQL, and `url` (a database there) through it. */
export async function wireCounterFor(url: string) {
  const admin = new URL(adminUrl);
  const counter = new PgWireCounter({ host: admin.hostname, port: Number(admin.port || 5432) });
  const proxyPort = await counter.listen();
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxyPort);
  return { counter, proxiedUrl: proxied.toString() };
}

/**
 * SQL statements and rows per request of `variant` on `server` (started on the counter's URL): three
 * requests unmeasured, then BENCH_COUNT_REQUESTS sequential ones, counted on the wire.
 */
export async function countPerRequest(server: ServerProcess, variant: Variant, counter: PgWireCounter) {
  await variant.supply?.({ requests: settings.countRequests + 3, url: server.url });
  for (let i = 0; i < 3; i++) await send(server, variant);
  await sleep(100);
  const before = counter.snapshot();
  for (let i = 0; i < settings.countRequests; i++) await send(server, variant);
  await sleep(100);
  const after = counter.snapshot();
  const n = settings.countRequests;
  return {
    requests: n,
    statements: (after.statements - before.statements) / n,
    dataStatements: (after.dataStatements - before.dataStatements) / n,
    rows: (after.rows - before.rows) / n,
  };
}

export async function countingPass(
  url: string,
  variants: Variant[],
  results: Record<string, VariantResult>,
  normalized: Map<string, unknown>,
) {
  const { counter, proxiedUrl } = await wireCounterFor(url);
  log(`counting pass: the servers through the wire counter on ${new URL(proxiedUrl).host}`);
  const servers = await startServers(proxiedUrl, '-counting');

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
    if (variant.refused !== undefined) {
      if (!first.text.includes(variant.refused)) {
        const warning = `${variant.key}: the check request answered ${first.status} without the refusal ${variant.refused} (${first.text.slice(0, 300)}); measured anyway, see its error counts`;
        warnings.push(warning);
        log(`  WARNING: ${warning}`);
      }
    } else if (first.status >= 300 || graphqlErrors) {
      const warning = `${variant.key}: the check request answered ${first.status}${graphqlErrors ? ` with GraphQL errors ${JSON.stringify(graphqlErrors).slice(0, 300)}` : ''}; measured anyway, see its error counts`;
      warnings.push(warning);
      log(`  WARNING: ${warning}`);
    }
    if (variant.normalize && first.json !== undefined) normalized.set(variant.key, variant.normalize(first.json));

    result.perRequest = await countPerRequest(server, variant, counter);
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
}

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

export async function drive(server: ServerProcess, variant: Variant, connections: number, durationS: number) {
  await variant.supply?.({ durationS, url: server.url });
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
    // A GraphQL error comes with 200: count those answers as errors too (or, where a refusal is the answer, any other).
    ...(variant.refused !== undefined
      ? { verifyBody: (body: string) => body.includes(variant.refused!) }
      : variant.kind === 'graphql'
        ? { verifyBody: (body: string) => !body.includes('"errors"') }
        : {}),
  };
  return (await autocannon(options as unknown as autocannon.Options)) as unknown as AutocannonResult;
}

export async function cell(
  server: ServerProcess,
  variant: Variant,
  connections: number,
  backend: BackendCpu,
  durationS = settings.durationS,
): Promise<CellResult> {
  // Before the readings: the database's work to make it ready is not the cell's.
  await variant.supply?.({ durationS, url: server.url });
  const lookupsBefore = variant.responseCache ? await cacheLookups(server) : undefined;
  const cpuBefore = cpuMs(server.pid);
  const machineBefore = machineCpu();
  const selfBefore = process.cpuUsage();
  const wallBefore = performance.now();
  backend.start();
  const sampler = setInterval(() => backend.sample(), 1000);
  const result = await drive(server, variant, connections, durationS);
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
export function groups(selected: Operation[]): Variant[][] {
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

/**
 * The load pass: the servers started afresh straight on PostgreSQL, each group of variants
 * warmed up, then every variant driven at every concurrency, one cell after another.
 */
export async function loadPass(url: string, databaseName: string, selected: Operation[], variantResults: Record<string, VariantResult>) {
  log('load pass: starting the servers straight on PostgreSQL');
  const servers = await startServers(url, '', gatewayNodeArgs);
  await sleep(1000);
  const rssAtStartMb = {
    gateway: memoryMb(servers.gateway.pid)?.rss ?? null,
    ...(servers.cachedGateway ? { cachedGateway: memoryMb(servers.cachedGateway.pid)?.rss ?? null } : {}),
    ...(servers.sharedCacheGateway ? { sharedCacheGateway: memoryMb(servers.sharedCacheGateway.pid)?.rss ?? null } : {}),
    ...(servers.federationGateway ? { federationGateway: memoryMb(servers.federationGateway.pid)?.rss ?? null } : {}),
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
  // On the data the deep page is held to the first page's cost (ten times the usual, the tenfold pass's).
  const pageRounds = dataScale >= TENFOLD_SCALE ? await pagesSideBySide(servers, selected, variantResults, backend) : undefined;
  const peakRssMb = {
    gateway: memoryMb(servers.gateway.pid)?.peakRss ?? null,
    ...(servers.cachedGateway ? { cachedGateway: memoryMb(servers.cachedGateway.pid)?.peakRss ?? null } : {}),
    ...(servers.sharedCacheGateway ? { sharedCacheGateway: memoryMb(servers.sharedCacheGateway.pid)?.peakRss ?? null } : {}),
    ...(servers.federationGateway ? { federationGateway: memoryMb(servers.federationGateway.pid)?.peakRss ?? null } : {}),
    postgraphile: memoryMb(servers.postgraphile.pid)?.peakRss ?? null,
  };
  for (const server of Object.values(servers)) {
    const lines = tail(server.logFile, 5);
    if (lines) log(`${server.name} log (last lines):\n${lines}`);
  }

  return { cells, rssAtStartMb, peakRssMb, ...(pageRounds ? { pageRounds } : {}) };
}

const PAGE_ROUNDS = 3;

/**
 * The deep page against the first (4d against 4b) on the gateway, at each level from c = 10, in
 * rounds that drive one and then the other, the one that goes first alternating. Whether a page deep
 * in a list costs what the first one costs is a ratio of two cells; in the load pass they run
 * minutes apart and meet different moments of a shared host, here within seconds of each other.
 */
async function pagesSideBySide(
  servers: Awaited<ReturnType<typeof startServers>>,
  selected: Operation[],
  variantResults: Record<string, VariantResult>,
  backend: BackendCpu,
): Promise<PageRounds[] | undefined> {
  const first = selected.find((operation) => operation.id === '4b')?.gateway;
  const deep = selected.find((operation) => operation.id === '4d')?.gateway;
  if (!first || !deep || !variantResults[first.key]?.available || !variantResults[deep.key]?.available) return undefined;
  const levels: PageRounds[] = [];
  for (const c of levelsFromTen()) {
    const rounds: PageRounds['rounds'] = [];
    for (let round = 0; round < PAGE_ROUNDS; round++) {
      const deepWentFirst = round % 2 === 1;
      const measured = new Map<Variant, CellResult>();
      for (const variant of deepWentFirst ? [deep, first] : [first, deep]) measured.set(variant, await cell(serverFor(servers, variant), variant, c, backend));
      const pages = { first: measured.get(first)!, deep: measured.get(deep)!, deepWentFirst };
      rounds.push(pages);
      log(
        `pages side by side c=${String(c).padEnd(3)} round ${round + 1}: first ${pages.first.requestsPerSecond.toFixed(0)} req/s, ` +
          `deep ${pages.deep.requestsPerSecond.toFixed(0)} req/s (${(pages.deep.requestsPerSecond / pages.first.requestsPerSecond).toFixed(2)}×)`,
      );
    }
    levels.push({ concurrency: c, rounds });
  }
  return levels;
}
