/**
 * npm run soak: the production build (npm run build, then node dist/src/main.js with NODE_ENV=production
 * and the node flags of start:prod), run for SOAK_DURATION on both databases at once:
 *
 *  - server: a database of its own on the local PostgreSQL (BENCH_DATABASE_URL), migrated and
 *    loaded with the bench's data set (50 categories, 10,000 pets, 50,000 orders);
 *  - embedded: the default with no DATABASE_URL, in a temporary DATA_DIR, with the demo data it
 *    seeds on its first start (the mix draws from the ids it finds there).
 *
 * Each gets the realistic mix (bench/lib/mix.ts, paced at SOAK_RATE), document churn (distinct
 * documents, harness/churn.ts, at SOAK_CHURN_RATE), and idle gaps of SOAK_IDLE_GAP seconds every
 * SOAK_ACTIVE seconds, longer than the pool's idle timeout and HTTP keep-alive, so connections are
 * closed and made again all along. Every SOAK_SAMPLE_INTERVAL seconds it samples each gateway: RSS
 * (/proc), heap, event-loop delay, handles, pool connections and cache sizes (/metrics), and the
 * requests, errors and p99 of the interval. It writes bench/results/soak.md, .json and .svg and
 * says, per database, whether anything grew (bench/lib/soak-report.ts) and whether any request failed;
 * either makes its exit code 1.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { allScopes } from '../src/auth/scopes.js';
import { applyPendingMigrations } from '../src/migrations/migrations.js';
import { runChurn } from '../harness/churn.js';
import { cleaningUp, cleanUp, cleanUpOnSignals, undoLater } from './lib/cleanup.js';
import { auth, jwtSecret, log, resultsDir, setRunName, sleep, startedAt, warnings } from './lib/config.js';
import { createDatabase, databaseUrl, dataSet, leftoverDatabases, loadData } from './lib/data.js';
import { benchMixData, type MixData, runCell } from './lib/mix.js';
import { helpAsked, soakSettings } from './lib/options.js';
import { memoryMb, type ServerProcess } from './lib/processes.js';
import { growthVerdicts, renderSoakMarkdown, renderSoakSvg, type Sample, type SoakDatabaseResult, type SoakResults } from './lib/soak-report.js';
import { build, git, startGateway } from './lib/servers.js';

setRunName('soak');
if (helpAsked('npm run soak', 'The production build under steady traffic with idle gaps, on the server database and the embedded default at once; writes bench/results/<SOAK_OUTPUT>.md, .json and .svg and says whether anything grew.', soakSettings)) {
  process.exit(0);
}
cleanUpOnSignals((message) => console.error(`\n${message}`));

const numberSetting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const settings = {
  durationS: numberSetting('SOAK_DURATION', 480),
  sampleS: numberSetting('SOAK_SAMPLE_INTERVAL', 30),
  rate: numberSetting('SOAK_RATE', 60),
  churnRate: numberSetting('SOAK_CHURN_RATE', 20),
  activeS: numberSetting('SOAK_ACTIVE', 45),
  idleGapS: numberSetting('SOAK_IDLE_GAP', 15),
  databases: (process.env.SOAK_DATABASES ?? 'server,embedded').split(',').map((name) => name.trim()),
  output: process.env.SOAK_OUTPUT ?? 'soak',
};
for (const name of settings.databases) {
  if (name !== 'server' && name !== 'embedded') throw new Error(`SOAK_DATABASES: no database ${name} (server, embedded)`);
}
/** Each distinct churn document is sent this often, its repeats spread out, as clients repeat themselves. */
const CHURN_REPEATS = 2;
const CHURN_CONCURRENCY = 4;

interface Target {
  database: 'server' | 'embedded';
  description: string;
  server: ServerProcess;
  data: MixData;
}

// ---- the two databases ------------------------------------------------------

async function serverTarget(): Promise<Target> {
  const name = await createDatabase();
  const url = databaseUrl(name);
  const leftovers = await leftoverDatabases(name);
  if (leftovers.length) warnings.push(`Databases left by earlier interrupted runs: ${leftovers.join(', ')}`);
  await applyPendingMigrations(url);
  await loadData(url);
  log(`database ${name}: migrated and loaded`);
  const server = await startGateway(url, 'soak-server');
  return {
    database: 'server',
    description: `A database of its own on the local PostgreSQL with the bench's data set (${dataSet.categories} categories, ${dataSet.pets.toLocaleString('en-US')} pets, ${dataSet.orders.toLocaleString('en-US')} orders), pool of 10.`,
    server,
    data: benchMixData,
  };
}

async function embeddedTarget(): Promise<Target> {
  const made: { dataDir?: string } = {};
  // Registered before the folder exists, and so undone after the gateway that uses it has stopped.
  undoLater('remove the embedded DATA_DIR', async () => {
    if (made.dataDir) await rm(made.dataDir, { recursive: true, force: true });
  });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'petstore-soak-'));
  made.dataDir = dataDir;
  log(`embedded DATA_DIR: ${dataDir}`);
  // The first start migrates the new folder and seeds the demo data: give it time on a busy machine.
  const server = await startGateway(undefined, 'soak-embedded', [], { DATA_DIR: dataDir });
  const data = await embeddedData(server);
  return {
    database: 'embedded',
    description: `The embedded default (no DATABASE_URL, a new DATA_DIR) with the demo data it seeded: ${data.categories.length} categories, ${data.readPets.length + data.orderPets.length} pets.`,
    server,
    data,
  };
}

async function graphql(server: ServerProcess, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth.token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: unknown };
  if (response.status !== 200 || body.errors) throw new Error(`${server.name}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body.data;
}

/**
 * The mix's ids from what the embedded database holds: the last quarter of its pets take the
 * orders, with their stock raised so that they never run out (as the bench's order pets); the rest
 * are read, renamed and restocked.
 */
async function embeddedData(server: ServerProcess): Promise<MixData> {
  const data = (await graphql(server, '{ pets(first: 100) { nodes { id } } categories(first: 100) { nodes { id } } }')) as {
    pets: { nodes: Array<{ id: string }> };
    categories: { nodes: Array<{ id: string }> };
  };
  const pets = data.pets.nodes.map((pet) => pet.id).sort((a, b) => Number(a) - Number(b));
  if (pets.length < 4) throw new Error(`the embedded database holds ${pets.length} pets; the demo data has 20`);
  const orderPets = pets.slice(pets.length - Math.max(1, Math.floor(pets.length / 4)));
  for (const petId of orderPets) {
    await graphql(server, 'mutation Stock($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 1000000 }) { petId } }', { petId });
  }
  return { readPets: pets.slice(0, pets.length - orderPets.length), orderPets, categories: data.categories.nodes.map((c) => c.id) };
}

// ---- sampling -----------------------------------------------------------------

function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

const labelled = (metrics: Map<string, number>, name: string) => {
  const found: Record<string, number> = {};
  const pattern = new RegExp(`^${name}\\{cache="([^"]+)"\\}$`);
  for (const [key, value] of metrics) {
    const match = pattern.exec(key);
    if (match) found[match[1]!] = value;
  }
  return found;
};

class Interval {
  latencies: number[] = [];
  errors = 0;
  record(latencyMs: number, failed: boolean) {
    this.latencies.push(latencyMs);
    if (failed) this.errors++;
  }
  take() {
    const sorted = this.latencies.sort((a, b) => a - b);
    const p99 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]! : null;
    const taken = { requests: sorted.length, errors: this.errors, p99Ms: p99 === null ? null : Math.round(p99 * 10) / 10 };
    this.latencies = [];
    this.errors = 0;
    return taken;
  }
}

// ---- one database's soak --------------------------------------------------------

async function soak(target: Target): Promise<SoakDatabaseResult> {
  const { server } = target;
  const interval = new Interval();
  const samples: Sample[] = [];
  const errorExamples: string[] = [];
  let totalRequests = 0;
  let totalErrors = 0;
  let bounds = { maxEntries: {} as Record<string, number>, maxBytes: {} as Record<string, number> };
  const failure = (detail: string) => {
    const kind = detail.slice(0, 40);
    if (errorExamples.length < 20 && !errorExamples.some((example) => example.startsWith(kind))) errorExamples.push(detail);
  };
  const began = performance.now();

  const takeSample = async (at: number, phase: Sample['phase']) => {
    const t = Math.round(at);
    const counts = interval.take();
    totalRequests += counts.requests;
    totalErrors += counts.errors;
    let metrics = new Map<string, number>();
    try {
      const response = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
      if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
      metrics = parseMetrics(await response.text());
    } catch (error) {
      counts.errors++;
      totalErrors++;
      failure(`scrape of /metrics: ${error instanceof Error ? error.message : error}`);
    }
    const metric = (key: string, scale = 1) => {
      const value = metrics.get(key);
      return value === undefined ? null : Math.round((value / scale) * 10) / 10;
    };
    const poolTotal = metric('petstore_db_pool_connections{state="total"}');
    const poolIdle = metric('petstore_db_pool_connections{state="idle"}');
    bounds = { maxEntries: labelled(metrics, 'petstore_cache_max_entries'), maxBytes: labelled(metrics, 'petstore_cache_max_bytes') };
    const rss = memoryMb(server.pid)?.rss;
    const sample: Sample = {
      t,
      phase,
      rssMb: rss === undefined ? null : Math.round(rss * 10) / 10,
      heapUsedMb: metric('nodejs_heap_size_used_bytes', 1024 * 1024),
      eventLoopP99Ms: metric('nodejs_eventloop_lag_p99_seconds', 0.001),
      activeHandles: metric('nodejs_active_handles_total'),
      poolInUse: poolTotal === null || poolIdle === null ? null : poolTotal - poolIdle,
      poolTotal,
      cacheEntries: labelled(metrics, 'petstore_cache_entries'),
      cacheBytes: labelled(metrics, 'petstore_cache_bytes'),
      ...counts,
    };
    samples.push(sample);
    log(
      `${target.database.padEnd(8)} t=${String(t).padStart(4)} s ${phase.padEnd(6)} RSS ${sample.rssMb} MB  heap ${sample.heapUsedMb} MB  ` +
        `loop p99 ${sample.eventLoopP99Ms} ms  handles ${sample.activeHandles}  pool ${sample.poolInUse}/${sample.poolTotal}  ` +
        `requests ${sample.requests}  p99 ${sample.p99Ms} ms  errors ${sample.errors}`,
    );
  };

  // One timeline for the traffic and the samples, in seconds from the start, kept to the clock so that
  // nothing drifts: the cycles start every SOAK_ACTIVE + SOAK_IDLE_GAP seconds and the samples fall every
  // SOAK_SAMPLE_INTERVAL. With the defaults (45 + 15, 30) every other sample is taken under traffic and
  // the others at the very end of a gap, just before the next burst: the quietest moment, where what a
  // burst left behind shows best. A sample and the start of a cycle at the same time: the sample first.
  const period = settings.activeS + settings.idleGapS;
  const events: Array<{ at: number; kind: 'sample' | 'traffic' }> = [];
  for (let k = 0; k * settings.sampleS <= settings.durationS + 0.001; k++) events.push({ at: k * settings.sampleS, kind: 'sample' });
  for (let at = 0; at < settings.durationS; at += period) events.push({ at, kind: 'traffic' });
  if (Math.floor(settings.durationS / settings.sampleS) * settings.sampleS < settings.durationS - 0.001) {
    events.push({ at: settings.durationS, kind: 'sample' });
  }
  events.sort((x, y) => x.at - y.at || (x.kind === 'sample' ? -1 : 1));
  const phaseAt = (at: number): Sample['phase'] => {
    if (at === 0) return 'start';
    const into = at % period;
    return into > 0 && into < settings.activeS && at < settings.durationS ? 'active' : 'idle';
  };

  let nextDocument = 0;
  let idleGaps = 0;
  const bursts: Promise<void>[] = [];
  const burst = async (durationS: number) => {
    const stopChurn = new AbortController();
    const churnTimer = setTimeout(() => stopChurn.abort(), durationS * 1000);
    const [, churned] = await Promise.all([
      runCell(server, {
        target: 'gateway',
        resultName: 'gateway',
        name: server.name,
        durationS,
        data: target.data,
        ratePerSecond: settings.rate,
        observe: (latencyMs, failed) => interval.record(latencyMs, failed),
      }),
      runChurn({
        url: `${server.url}/graphql`,
        start: nextDocument,
        documents: 1_000_000,
        repeats: CHURN_REPEATS,
        concurrency: CHURN_CONCURRENCY,
        ratePerSecond: settings.churnRate,
        signal: stopChurn.signal,
        onResponse: (latencyMs, error) => {
          interval.record(latencyMs, error !== undefined);
          if (error) failure(`churn: ${error}`);
        },
      }),
    ]);
    clearTimeout(churnTimer);
    nextDocument += churned.documents;
  };
  for (const event of events) {
    const wait = event.at * 1000 - (performance.now() - began);
    if (wait > 0) await sleep(wait);
    if (cleaningUp()) break;
    if (event.kind === 'sample') {
      await takeSample(event.at, phaseAt(event.at));
    } else {
      const durationS = Math.min(settings.activeS, settings.durationS - event.at);
      if (event.at + durationS < settings.durationS) idleGaps++;
      bursts.push(burst(durationS));
    }
  }
  await Promise.all(bursts);
  // Answers that came in after the last sample still count.
  const rest = interval.take();
  totalRequests += rest.requests;
  totalErrors += rest.errors;
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    totalErrors++;
    failure(`${server.name} exited during the soak (code ${server.child.exitCode}, signal ${server.child.signalCode}); see ${server.logFile}`);
  }
  // The mix's first error of each kind is in the run's warnings, named by the server.
  for (const warning of warnings) if (warning.startsWith(`mix ${server.name} `)) failure(warning);
  const verdicts = growthVerdicts(samples, settings.durationS, bounds);
  return {
    database: target.database,
    description: target.description,
    gatewayPid: server.pid,
    samples,
    cacheMaxEntries: bounds.maxEntries,
    cacheMaxBytes: bounds.maxBytes,
    requests: totalRequests,
    errors: totalErrors,
    errorExamples,
    distinctChurnDocuments: nextDocument,
    idleGaps,
    verdicts,
    grew: verdicts.filter((verdict) => verdict.grew).map((verdict) => verdict.metric),
  };
}

// ---- main -------------------------------------------------------------------------

async function main(): Promise<boolean> {
  mkdirSync(resultsDir, { recursive: true });
  auth.token ??= await new SignJWT({ scope: allScopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('soak')
    .setIssuedAt()
    .setExpirationTime('3h')
    .sign(new TextEncoder().encode(jwtSecret));
  await build();
  const built = { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--', 'src', 'prisma']).length > 0 };
  const loadAverageAtStart = os.loadavg().map((value) => Number(value.toFixed(2)));
  const targets = await Promise.all(settings.databases.map((name) => (name === 'server' ? serverTarget() : embeddedTarget())));
  log(
    `soaking ${targets.map((target) => target.database).join(' and ')} for ${settings.durationS} s: mix ${settings.rate}/s, ` +
      `churn ${settings.churnRate}/s, ${settings.activeS} s on and ${settings.idleGapS} s idle, a sample every ${settings.sampleS} s`,
  );
  const databases = await Promise.all(targets.map(soak));
  const results: SoakResults = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    settings: { ...settings, databases: settings.databases.join(','), churnRepeats: CHURN_REPEATS },
    machine: {
      nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
      cpuModel: os.cpus()[0]?.model.trim() ?? '?',
      memoryGb: os.totalmem() / 1024 ** 3,
      loadAverageAtStart,
      loadAverageAtEnd: os.loadavg().map((value) => Number(value.toFixed(2))),
    },
    git: built,
    node: process.version,
    method:
      `Each database gets, at once and for ${settings.durationS} s: the realistic mix (bench/lib/mix.ts: reads by Zipf-distributed id, pages, ` +
      `categories, inventory, orders with a token, 2% writes; its staleness checker counts as errors) at ${settings.rate} requests/s ` +
      `from 10 clients, and document churn (harness/churn.ts: distinct documents, each sent ${CHURN_REPEATS} times) at ` +
      `${settings.churnRate} requests/s, for ${settings.activeS} s, then ${settings.idleGapS} s of silence (past the pool's 10 s idle ` +
      `timeout and the 5 s HTTP keep-alive), over and over. A sample every ${settings.sampleS} s: RSS from /proc, the rest from /metrics ` +
      '(nodejs_heap_size_used_bytes, nodejs_eventloop_lag_p99_seconds, nodejs_active_handles_total, petstore_db_pool_connections, ' +
      'petstore_cache_entries) and the load generator (requests, errors, p99 over the interval); with the defaults, every other ' +
      'sample falls under traffic and the others at the very end of a gap. Growth test: the first third of the time is warm-up; a ' +
      'measure grew when the median of the last third exceeds the median of the middle third by more than its tolerance, samples ' +
      'under traffic compared with each other and samples in the gaps with each other (a cache at its bound does not count). ' +
      'The slope is for information.',
    databases,
    warnings,
  };
  const base = path.join(resultsDir, settings.output);
  writeFileSync(`${base}.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${base}.svg`, renderSoakSvg(results));
  const markdown = renderSoakMarkdown(results, `${settings.output}.svg`);
  writeFileSync(`${base}.md`, markdown);
  console.log(`\n${markdown}`);
  log(`wrote bench/results/${settings.output}.md, .json and .svg`);
  let clean = true;
  for (const db of databases) {
    const first = db.samples[0];
    const last = db.samples.at(-1);
    console.log(
      `${db.database}: RSS ${first?.rssMb} → ${last?.rssMb} MB, heap ${first?.heapUsedMb} → ${last?.heapUsedMb} MB; ` +
        `${db.grew.length ? `GREW: ${db.grew.join(', ')}` : 'nothing grew'}; ${db.errors} errors in ${db.requests} requests`,
    );
    if (db.grew.length || db.errors) clean = false;
  }
  return clean;
}

try {
  if (!(await main())) process.exitCode = 1;
} catch (error) {
  if (!cleaningUp()) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
} finally {
  await cleanUp();
}
