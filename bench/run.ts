/**
 * npm run bench: the gateway and PostGraphile 5 side by side, in one run, on one database.
 *
 *  1. Installs bench/peers (PostGraphile 5 + Node 24, the gateway's major) with `npm ci` if it is not installed.
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
 *  6. Ladder pass: the five reads and every write answered by every rung of bench/ladder/server.ts (one SQL
 *     statement, Prisma alone, the schema in a bare yoga), the gateway field by field and as built,
 *     and PostGraphile, answers checked equal, at c = 10 and 50 (bench/lib/ladder.ts).
 *  7. Mix pass: a realistic mix of reads and 2% writes from 10 clients, with a staleness checker, on
 *     the gateway uncached, with its response cache, and PostGraphile (bench/lib/mix.ts).
 *  8. Replica routing pass: a primary and a streaming replica of the bench's own (initdb,
 *     pg_basebackup), the gateway on the primary alone and with the replica, side by side.
 *  9. Live pass: 1,000 live queries over SSE under writes, then the same clients polling every second
 *     (bench/lib/live.ts).
 * 10. Baseline pass (only when BENCH_PASSES names it): the gateway built from an earlier commit
 *     (BENCH_BASELINE; built once in bench/.baselines/<sha> and reused) against the work tree's,
 *     alternately, cell by cell, answers checked alike first (bench/lib/baseline.ts).
 * 11. Tenfold pass: the counting and load passes of the reads again, on ten times the data, in a run
 *     of this bench of their own with its own database and servers (bench/lib/tenfold.ts).
 * 12. Writes bench/results/latest.json and latest.md and prints the table.
 *
 * Whatever it started or made (servers, the database, the replica servers and their folder) is
 * undone at the end, on failure, and on SIGINT, SIGTERM or SIGHUP (bench/lib/cleanup.ts).
 * `npm run bench -- --help` lists the settings (bench/lib/options.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { allScopes } from '../src/auth/scopes.js';
import { applyPendingMigrations } from '../src/migrations/migrations.js';
import {
  auth,
  jwtSecret,
  loadAtStart,
  log,
  only,
  outputName,
  passes,
  peersDir,
  poolSize,
  resultsDir,
  root,
  settings,
  startedAt,
  warnings,
} from './lib/config.js';
import { cleaningUp, cleanUp, cleanUpOnSignals } from './lib/cleanup.js';
import { baselinePass } from './lib/baseline.js';
import { checkBaselineSettings, prepareBaseline } from './lib/baseline-build.js';
import { adminUrl, closeOrderFunctions, createDatabase, databaseUrl, dataSet, leftoverDatabases, loadData, placeOrderFunction, withClient } from './lib/data.js';
import { rowPoolsIn } from './lib/row-pools.js';
import { countingPass, loadPass } from './lib/matrix.js';
import { ladderPass } from './lib/ladder.js';
import { livePass } from './lib/live.js';
import { mixPass } from './lib/mix.js';
import { replicaRoutingPass } from './lib/replicas.js';
import { tenfoldPass } from './lib/tenfold.js';
import { type Operation, operations, plainReads } from './lib/operations.js';
import { benchSettings, helpAsked } from './lib/options.js';
import { type BenchResults, renderMarkdown, type VariantResult } from './lib/report.js';
import { build, ensurePeers, git, packageVersion } from './lib/servers.js';

// ---- the command line, and clean-up on failure, Ctrl-C and SIGTERM ---------

if (helpAsked('npm run bench', 'The gateway and PostGraphile 5 side by side, on a database of its own; writes bench/results/<BENCH_OUTPUT>.md and .json.', benchSettings)) {
  process.exit(0);
}
cleanUpOnSignals((message) => console.error(`\n${message}`));

// ---- main -----------------------------------------------------------------

/** The PostgreSQL server's version, and whether pg_stat_statements is preloaded. */
async function serverFacts() {
  return withClient(adminUrl, async (admin) => ({
    postgresVersion: (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?',
    preload: (await admin.query<{ shared_preload_libraries: string }>('SHOW shared_preload_libraries')).rows[0]
      ?.shared_preload_libraries,
  }));
}

/** The bench's own database: created, migrated, loaded with the data set and the bench's SQL functions. */
async function prepareDatabase() {
  const name = await createDatabase();
  const url = databaseUrl(name);
  const leftovers = await leftoverDatabases(name);
  if (leftovers.length) {
    warnings.push(`Databases left by earlier interrupted runs (drop them when no run is going): ${leftovers.join(', ')}`);
  }
  log(`database ${name}: migrating`);
  const applied = await applyPendingMigrations(url);
  log(`applied ${applied.join(', ')}; loading the data set`);
  await loadData(url);
  await withClient(url, async (db) => {
    for (const sql of [placeOrderFunction, ...closeOrderFunctions]) await db.query(sql);
  });
  rowPoolsIn(url);
  log('data loaded');
  return { name, url };
}

/** Each operation with whether the gateway and PostGraphile answered it with the same data. */
function compareAnswers(selected: Operation[], normalized: Map<string, unknown>) {
  return selected.map((operation) => {
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
}

/** Everything the report states about this run: when, where, with what, and every figure. */
function describeRun(run: {
  peerNodeVersion: string;
  postgresVersion: string;
  preload: string | undefined;
  built: BenchResults['git'];
  buildResult: BenchResults['build'];
  operationResults: BenchResults['operations'];
  variantResults: BenchResults['variants'];
  cells: BenchResults['cells'];
  peakRssMb: BenchResults['peakRssMb'];
  rssAtStartMb: BenchResults['rssAtStartMb'];
  pageRounds: BenchResults['pageRounds'];
  replicaRouting: BenchResults['replicaRouting'];
  mix: BenchResults['mix'];
  ladder: BenchResults['ladder'];
  live: BenchResults['live'];
  baseline: BenchResults['baseline'];
  tenfold: BenchResults['tenfold'];
}): BenchResults {
  const { peerNodeVersion, postgresVersion, preload, built, buildResult, operationResults, variantResults, cells, peakRssMb, rssAtStartMb, pageRounds, replicaRouting, mix, ladder, live, baseline, tenfold } = run;
  const finishedAt = new Date();
  return {
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
    ...(pageRounds ? { pageRounds } : {}),
    ...(replicaRouting ? { replicaRouting } : {}),
    ...(mix ? { mix } : {}),
    ...(ladder ? { ladder } : {}),
    ...(live ? { live } : {}),
    ...(baseline ? { baseline } : {}),
    ...(tenfold ? { tenfold } : {}),
    warnings,
  };
}

async function main() {
  mkdirSync(resultsDir, { recursive: true });
  const selected = operations.filter((operation) => !only || only.includes(operation.id));
  if (selected.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no operation`);
  checkBaselineSettings();
  // PostGraphile and the bench database serve the passes that compare the two servers.
  const comparing = passes.has('count') || passes.has('mix') || passes.has('ladder');
  const peerNodeVersion = comparing ? await ensurePeers() : 'not run';
  // The live and baseline passes need the bench's data set, not PostGraphile.
  const needsDatabase = comparing || passes.has('live') || passes.has('baseline');
  auth.token ??= await new SignJWT({ scope: allScopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('3h')
    .sign(new TextEncoder().encode(jwtSecret));
  const buildResult = await build();
  // What was built: the commit, and whether the working tree differed from it at that moment.
  const built = { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--', 'src', 'prisma']).length > 0 };
  // Before the database is made: a baseline that does not build stops the run early.
  const baselineBuild = passes.has('baseline') ? await prepareBaseline() : undefined;

  const { postgresVersion, preload } = await serverFacts();
  const database = needsDatabase ? await prepareDatabase() : undefined;

  const variantResults: Record<string, VariantResult> = {};
  let operationResults: BenchResults['operations'] = [];
  let cells: BenchResults['cells'] = [];
  let rssAtStartMb: BenchResults['rssAtStartMb'] = { gateway: null, postgraphile: null };
  let peakRssMb: BenchResults['peakRssMb'] = { gateway: null, postgraphile: null };
  let pageRounds: BenchResults['pageRounds'];
  if (database && passes.has('count')) {
    const variants = [
      ...new Map(selected.flatMap((o) => [o.gateway, ...(o.postgraphile ? [o.postgraphile] : [])]).map((v) => [v.key, v])).values(),
    ];
    const normalized = new Map<string, unknown>();
    await countingPass(database.url, variants, variantResults, normalized);
    operationResults = compareAnswers(selected, normalized);
  }
  if (database && passes.has('load')) {
    ({ cells, rssAtStartMb, peakRssMb, pageRounds } = await loadPass(database.url, database.name, selected, variantResults));
  }
  const ladder = database && passes.has('ladder') ? await ladderPass(database.url, database.name) : undefined;
  const mix = database && passes.has('mix') ? await mixPass(database.url, database.name) : undefined;
  const replicaRouting = passes.has('replicas') ? await replicaRoutingPass() : undefined;
  const live = database && passes.has('live') ? await livePass(database.url) : undefined;
  const baseline = database && baselineBuild ? await baselinePass(database.url, database.name, selected, baselineBuild, built) : undefined;
  const tenfoldReads = plainReads.filter((operation) => selected.includes(operation)).map((operation) => operation.id);
  const tenfold = passes.has('tenfold') && tenfoldReads.length ? await tenfoldPass(tenfoldReads) : undefined;
  const results = describeRun({
    peerNodeVersion,
    postgresVersion,
    preload,
    built,
    buildResult,
    operationResults,
    variantResults,
    cells,
    peakRssMb,
    rssAtStartMb,
    pageRounds,
    replicaRouting,
    mix,
    ladder,
    live,
    baseline,
    tenfold,
  });
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
  // After a signal, what fails is what the clean-up cut short: not worth a message.
  if (!cleaningUp()) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
} finally {
  await cleanUp();
}
