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
 *  6. Mix pass (BENCH_MIX=0 skips it): a realistic mix of reads and 2% writes from 10 clients, with a
 *     staleness checker, on the gateway uncached, with its response cache, and PostGraphile (bench/lib/mix.ts).
 *  7. Replica routing pass (BENCH_REPLICAS=0 skips it): a primary and a streaming replica of the bench's
 *     own (initdb, pg_basebackup), the gateway on the primary alone and with the replica, side by side.
 *  8. Writes bench/results/latest.json and latest.md, prints the table, stops the servers and
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
  peersDir,
  poolSize,
  resultsDir,
  root,
  settings,
  startedAt,
  warnings,
} from './lib/config.js';
import { adminUrl, createDatabase, databaseUrl, dataSet, dropDatabase, leftoverDatabases, loadData, placeOrderFunction, withClient } from './lib/data.js';
import { countingPass, loadPass } from './lib/matrix.js';
import { mixPass } from './lib/mix.js';
import { replicaRoutingPass } from './lib/replicas.js';
import { type Operation, operations } from './lib/operations.js';
import { stopAll } from './lib/processes.js';
import { type BenchResults, renderMarkdown, type VariantResult } from './lib/report.js';
import { build, ensurePeers, git, packageVersion } from './lib/servers.js';

// ---- clean-up, also on failure and Ctrl-C ---------------------------------

let databaseName: string | undefined;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll().catch((error) => console.error('stopping the servers:', error));
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

// ---- main -----------------------------------------------------------------

/** The bench's own database: created, migrated, loaded with the data set and the bench's SQL function. */
async function prepareDatabase() {
  const { postgresVersion, preload } = await withClient(adminUrl, async (admin) => ({
    postgresVersion: (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?',
    preload: (await admin.query<{ shared_preload_libraries: string }>('SHOW shared_preload_libraries')).rows[0]
      ?.shared_preload_libraries,
  }));
  const name = await createDatabase();
  databaseName = name;
  const url = databaseUrl(name);
  const leftovers = await leftoverDatabases(name);
  if (leftovers.length) {
    warnings.push(`Databases left by earlier interrupted runs (drop them when no run is going): ${leftovers.join(', ')}`);
  }
  log(`database ${name}: migrating`);
  const applied = await applyPendingMigrations(url);
  log(`applied ${applied.join(', ')}; loading the data set`);
  await loadData(url);
  await withClient(url, (db) => db.query(placeOrderFunction));
  log('data loaded');
  return { name, url, postgresVersion, preload };
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
  replicaRouting: BenchResults['replicaRouting'];
  mix: BenchResults['mix'];
}): BenchResults {
  const { peerNodeVersion, postgresVersion, preload, built, buildResult, operationResults, variantResults, cells, peakRssMb, rssAtStartMb, replicaRouting, mix } = run;
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
    ...(replicaRouting ? { replicaRouting } : {}),
    ...(mix ? { mix } : {}),
    warnings,
  };
}

async function main() {
  mkdirSync(resultsDir, { recursive: true });
  const selected = operations.filter((operation) => !only || only.includes(operation.id));
  if (selected.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no operation`);
  const peerNodeVersion = ensurePeers();
  auth.token ??= await new SignJWT({ scope: allScopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('3h')
    .sign(new TextEncoder().encode(jwtSecret));
  const buildResult = build();
  // What was built: the commit, and whether the working tree differed from it at that moment.
  const built = { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--', 'src', 'prisma']).length > 0 };

  const { name, url, postgresVersion, preload } = await prepareDatabase();

  const variants = [
    ...new Map(selected.flatMap((o) => [o.gateway, ...(o.postgraphile ? [o.postgraphile] : [])]).map((v) => [v.key, v])).values(),
  ];
  const variantResults: Record<string, VariantResult> = {};
  const normalized = new Map<string, unknown>();
  await countingPass(url, variants, variantResults, normalized);

  const operationResults = compareAnswers(selected, normalized);

  const { cells, rssAtStartMb, peakRssMb } = await loadPass(url, name, selected, variantResults);
  const mix = process.env.BENCH_MIX === '0' ? undefined : await mixPass(url, name);
  const replicaRouting = process.env.BENCH_REPLICAS === '0' ? undefined : await replicaRoutingPass();
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
    replicaRouting,
    mix,
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
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
