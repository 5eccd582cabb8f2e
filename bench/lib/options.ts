import { parseArgs } from 'node:util';

/**
 * The settings of `npm run bench` and `npm run soak` (environment variables), as `--help` prints
 * them. Both commands take no other argument: `--help` prints this and starts nothing.
 */

export interface Setting {
  name: string;
  default: string;
  what: string;
}

/** Read by both commands. */
const shared: Setting[] = [
  {
    name: 'BENCH_DATABASE_URL',
    default: 'postgresql://postgres@127.0.0.1:5432/postgres',
    what: 'Admin URL of the PostgreSQL server where the run creates (and at its end drops) a database of its own.',
  },
  { name: 'BENCH_SKIP_BUILD', default: 'unset', what: '1: run dist/ as it is instead of `npm run build` first.' },
  { name: 'BENCH_STRICT_BUILD', default: 'unset', what: '1: stop when the build reports type errors, instead of running what tsc emitted.' },
  {
    name: 'BENCH_AUTH_TOKEN',
    default: 'a token the run signs',
    what: 'Bearer token for orders and the writes; by default the run gives the gateway an HS256 key of its own and signs one with every scope.',
  },
];

export const benchSettings: Setting[] = [
  { name: 'BENCH_PASSES', default: 'count,load,ladder,mix,replicas,live,tenfold', what: 'The passes to run (load also runs count; ladder runs the five reads and every write on every rung of bench/ladder at c ≥ 10; tenfold runs the counting and load passes of the reads again on ten times the data, in a run of its own with a database of its own, at c ≥ 10, with the first orders page and the page after the 10,000th order also driven side by side in rounds; baseline, run only when named, compares the work tree\'s gateway with BENCH_BASELINE\'s). PostGraphile is set up only for count, load, ladder and mix; the bench database for those, live and baseline.' },
  { name: 'BENCH_DURATION', default: '8', what: 'Seconds of load per cell (the mix and replica passes scale it).' },
  { name: 'BENCH_WARMUP', default: '5', what: 'Seconds of warm-up per variant.' },
  { name: 'BENCH_CONCURRENCY', default: '1,10,50', what: 'Concurrency levels of the load pass (the ladder, tenfold and baseline passes take those of 10 and more).' },
  { name: 'BENCH_COUNT_REQUESTS', default: '20', what: 'Sequential requests per variant in the counting pass.' },
  { name: 'BENCH_SCALE', default: '1', what: 'Times the data set\'s pets and orders (10: 100,000 pets and 500,000 orders in the same 50 categories).' },
  { name: 'BENCH_ONLY', default: 'all', what: 'Operation ids to run, e.g. 1,1c,3b (the ladder pass takes those of its reads 1, 2, 3a, 4b, 4d and writes 5 to 14).' },
  { name: 'BENCH_MIX', default: '1', what: '0: skip the realistic mix pass (as BENCH_PASSES without mix).' },
  { name: 'BENCH_REPLICAS', default: '1', what: '0: skip the replica routing pass (as BENCH_PASSES without replicas).' },
  { name: 'BENCH_LIVE_CLIENTS', default: '1000', what: 'Clients of the live pass: live queries over SSE, then the same clients polling every second.' },
  { name: 'BENCH_LIVE_WRITES_PER_SECOND', default: '10', what: 'Writes a second (renames, stock counts, orders) during the live pass.' },
  { name: 'BENCH_REDIS_URL', default: 'redis://127.0.0.1:6379', what: "Redis for the gateways that share it as instances do: the shared cache row (1r), the cached gateways of the mix pass, the write notices of the live pass (in memory when it does not answer)." },
  { name: 'BENCH_BASELINE', default: 'unset', what: 'Git ref (branch, tag, sha, HEAD~1) the baseline pass compares the work tree with, required by it: its commit is exported (git archive), installed (npm ci) and built in bench/.baselines/<sha>, once; later runs reuse that folder (delete it to rebuild). Both gateways take the operations of BENCH_ONLY at the levels of BENCH_CONCURRENCY from 10 up (all of them if none is), alternately, after a check that they answer alike.' },
  { name: 'BENCH_BASELINE_ROUNDS', default: '3', what: 'Rounds per cell of the baseline pass: each drives both gateways for BENCH_DURATION s, the one that goes first alternating.' },
  { name: 'BENCH_BASELINE_STARTS', default: '1', what: 'Times the baseline pass starts both sides\' gateways afresh, each start running BENCH_BASELINE_ROUNDS rounds per cell: two processes of the same build differ by several percent from start to start, which rounds within one start cannot show.' },
  { name: 'BENCH_BASELINE_SETTINGS', default: 'unset', what: 'Gateway settings for the baseline\'s gateways only, "NAME=value NAME2=value2", e.g. BENCH_BASELINE=HEAD BENCH_BASELINE_SETTINGS=GRAPHQL_QUERY_PLANS=false for what a setting is worth. Over the environment and the bench\'s own settings, under those that make a row (FEDERATION=true for 1f…).' },
  { name: 'BENCH_CURRENT_SETTINGS', default: 'unset', what: 'The same for the work tree\'s gateways in the baseline pass only.' },
  { name: 'BENCH_GATEWAY_NODE_ARGS', default: 'unset', what: 'Extra node flags for the gateway under load, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".' },
  { name: 'BENCH_OUTPUT', default: 'latest', what: 'Basename of the result files in bench/results.' },
  ...shared,
];

export const soakSettings: Setting[] = [
  { name: 'SOAK_DURATION', default: '480', what: 'Seconds of traffic on each database (both at once); about a minute of set-up comes on top.' },
  { name: 'SOAK_SAMPLE_INTERVAL', default: '30', what: 'Seconds between two samples of each gateway.' },
  { name: 'SOAK_DATABASES', default: 'server,embedded', what: 'server: a database of its own on BENCH_DATABASE_URL with the bench data set; embedded: no DATABASE_URL, a temporary DATA_DIR and the demo data.' },
  { name: 'SOAK_RATE', default: '60', what: 'Requests a second of the realistic mix, per database, while active.' },
  { name: 'SOAK_CHURN_RATE', default: '20', what: 'Requests a second of distinct documents (document churn), per database, while active.' },
  { name: 'SOAK_ACTIVE', default: '45', what: 'Seconds of traffic between two idle gaps.' },
  { name: 'SOAK_IDLE_GAP', default: '15', what: "Seconds of silence: longer than the pool's idle timeout (DATABASE_IDLE_TIMEOUT_MS, 10 s) and HTTP keep-alive (5 s)." },
  { name: 'SOAK_OUTPUT', default: 'soak', what: 'Basename of the result files in bench/results (.md, .json, .svg).' },
  ...shared,
];

export function usage(command: string, summary: string, settings: Setting[]): string {
  const width = Math.max(...settings.map((setting) => setting.name.length));
  return [
    `Usage: ${command} [-- --help]`,
    '',
    summary,
    '',
    'Settings (environment variables; any gateway setting in the environment also reaches the gateways run):',
    ...settings.map((setting) => `  ${setting.name.padEnd(width)}  ${setting.what} (default: ${setting.default})`),
    '',
    'Interrupted (Ctrl-C, SIGTERM), it stops the servers it started and drops or removes what it made.',
  ].join('\n');
}

/**
 * Reads the command line: true when it asked for --help (printed; nothing is to start). Any other
 * argument is an error, printed with the usage, with exit code 2: settings are environment variables.
 */
export function helpAsked(command: string, summary: string, settings: Setting[]): boolean {
  try {
    const { values } = parseArgs({ args: process.argv.slice(2), options: { help: { type: 'boolean', short: 'h' } }, strict: true });
    if (!values.help) return false;
    console.log(usage(command, summary, settings));
    return true;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : error}\n\n${usage(command, summary, settings)}`);
    process.exit(2);
  }
}
