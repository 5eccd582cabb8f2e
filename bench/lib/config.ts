import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/** The bench's settings (environment, see bench/run.ts), paths, and the run's own log and warnings. */

export const root = path.resolve(import.meta.dirname, '../..');
export const peersDir = path.join(root, 'bench/peers');
export const resultsDir = path.join(root, 'bench/results');
export const peerNode = path.join(peersDir, 'node_modules/.bin/node');
export const poolSize = 10;

const numberSetting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
export const settings = {
  durationS: numberSetting('BENCH_DURATION', 8),
  warmupS: numberSetting('BENCH_WARMUP', 5),
  concurrency: (process.env.BENCH_CONCURRENCY ?? '1,10,50').split(',').map((c) => Number.parseInt(c, 10)),
  countRequests: numberSetting('BENCH_COUNT_REQUESTS', 20),
};
const defaultPasses = ['count', 'load', 'ladder', 'mix', 'replicas', 'live', 'tenfold'];
/** Run only when BENCH_PASSES names them: the baseline pass needs a commit to build (BENCH_BASELINE). */
const namedOnlyPasses = ['baseline'];
const allPasses = [...defaultPasses, ...namedOnlyPasses];
/** The passes to run (BENCH_PASSES); BENCH_MIX=0 and BENCH_REPLICAS=0 leave theirs out. */
export const passes = new Set((process.env.BENCH_PASSES ?? defaultPasses.join(',')).split(',').map((pass) => pass.trim()).filter(Boolean));
for (const pass of passes) if (!allPasses.includes(pass)) throw new Error(`BENCH_PASSES: no pass ${pass} (${allPasses.join(', ')})`);
// The load pass measures what the counting pass found answering.
if (passes.has('load')) passes.add('count');
if (process.env.BENCH_MIX === '0') passes.delete('mix');
if (process.env.BENCH_REPLICAS === '0') passes.delete('replicas');
export const only = process.env.BENCH_ONLY?.split(',').map((id) => id.trim());
/**
 * The concurrency levels of the passes that compare at c ≥ 10 (ladder, baseline): those of
 * BENCH_CONCURRENCY from 10 up, or all of them when none is.
 */
export const levelsFromTen = () => {
  const levels = settings.concurrency.filter((c) => c >= 10);
  return levels.length ? levels : settings.concurrency;
};

/**
 * `NAME=value NAME2=value2` (BENCH_BASELINE_SETTINGS, BENCH_CURRENT_SETTINGS): gateway settings for
 * one side of the baseline pass. Where the bench points a gateway (HOST, PORT, DATABASE_URL) is its own.
 */
function gatewaySettings(name: string): Record<string, string> {
  const pairs = (process.env[name] ?? '').split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
      if (!match) throw new Error(`${name}: "${pair}" is not NAME=value (settings are separated by spaces)`);
      if (['HOST', 'PORT', 'DATABASE_URL'].includes(match[1]!)) throw new Error(`${name}: ${match[1]} is set by the bench`);
      return [match[1]!, match[2]!];
    }),
  );
}
/** The baseline pass (bench/lib/baseline.ts): what it builds and compares the work tree with, and how. */
export const baselineConfig = {
  /** A git ref (branch, tag, sha, HEAD~1): its commit is built in bench/.baselines/<sha>. */
  ref: process.env.BENCH_BASELINE?.trim() || undefined,
  settings: gatewaySettings('BENCH_BASELINE_SETTINGS'),
  currentSettings: gatewaySettings('BENCH_CURRENT_SETTINGS'),
  /** Rounds per cell, each driving both gateways once, the one that goes first alternating. */
  rounds: Math.max(1, Math.round(numberSetting('BENCH_BASELINE_ROUNDS', 3))),
  /**
   * Times both sides' gateways are started afresh, each start running every round: a process's own
   * speed differs from one start to the next, which rounds within one start do not show.
   */
  starts: Math.max(1, Math.round(numberSetting('BENCH_BASELINE_STARTS', 1))),
  /** Where the baselines are built, one folder per commit, kept for the next run (gitignored). */
  dir: path.join(root, 'bench/.baselines'),
};
/**
 * The gateway in production verifies bearer tokens with a configured key: the
 * bench gives it a key of its own (HS256) and signs one token with every scope,
 * sent only on the requests that need one (orders, placeOrder). BENCH_AUTH_TOKEN
 * replaces that token (for a gateway configured otherwise).
 */
export const jwtSecret = randomBytes(32).toString('base64url');
export const auth: { token: string | undefined } = { token: process.env.BENCH_AUTH_TOKEN };
/** Basename of the result files in bench/results (latest.json, latest.md by default). */
export const outputName = process.env.BENCH_OUTPUT ?? 'latest';
/** Extra flags for the load-pass gateway's node, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof. */
export const gatewayNodeArgs = process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
/** What the report must say about this run (a skipped build, different data, leftovers…). */
export const warnings: string[] = [];
export const startedAt = new Date();
export const loadAtStart = os.loadavg().map((value) => Number(value.toFixed(2)));
let runName = 'bench';
/** Names the run in its log lines: `[bench  12 s] …` or `[soak  12 s] …`. */
export const setRunName = (name: string) => {
  runName = name;
};
export const log = (message: string) =>
  console.log(`[${runName} ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)} s] ${message}`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
