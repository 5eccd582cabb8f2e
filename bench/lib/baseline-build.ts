import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { undoLater } from './cleanup.js';
import { baselineConfig, log, passes, root, warnings } from './config.js';
import { runCommand } from './processes.js';
import type { BenchResults } from './report.js';
import { buildGateway, type GatewayBuild, nodeOfSameMajor, npmCi } from './servers.js';

/**
 * The other side of the baseline pass: the gateway built from an earlier commit (BENCH_BASELINE) in
 * a folder of its own, bench/.baselines/<sha> (gitignored; tsc, eslint and vitest do not read it).
 * The commit's files come from `git archive` (no worktree for git to keep track of), then `npm ci`
 * and `npm run build` there as the work tree is installed and built; its own node_modules/.bin/node
 * builds and runs it. The folder is made as <sha>.partial-<pid> and renamed once built, so a
 * <sha> folder is complete: the next run with the same commit reuses it without building again.
 */

export interface BaselineBuild extends GatewayBuild {
  /** BENCH_BASELINE as given, and the commit it named when the run started. */
  ref: string;
  commit: string;
  nodeVersion: string;
  /** Built by an earlier run, and reused as it was. */
  reused: boolean;
  build: BenchResults['build'];
  buildSeconds: number;
}

/**
 * How long an interrupted step of the build may take to stop before the clean-up kills it: the
 * half-built folder is removed anyway, and npm would otherwise finish its step first (a minute).
 */
const STOP_WITHIN_MS = 3000;

/** Written last into a built folder: what was built, and how the build went. */
const BUILT_MARKER = '.bench-baseline.json';

/** Stops a run whose baseline settings cannot work before it builds anything or makes a database. */
export function checkBaselineSettings(): void {
  if (passes.has('baseline') && !baselineConfig.ref) {
    throw new Error('BENCH_PASSES=baseline needs BENCH_BASELINE=<git ref> (a branch, tag, sha or HEAD~1) to compare the work tree with');
  }
  if (!passes.has('baseline') && baselineConfig.ref) {
    throw new Error(`BENCH_BASELINE=${baselineConfig.ref} is read by the baseline pass only: add baseline to BENCH_PASSES`);
  }
  if (baselineConfig.ref) resolveCommit(baselineConfig.ref);
}

function resolveCommit(ref: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    throw new Error(`BENCH_BASELINE=${ref} names no commit of this repository (git rev-parse --verify)`);
  }
}

const relative = (dir: string) => path.relative(root, dir);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Half-made folders of runs that were killed before their clean-up could remove them (SIGKILL). */
function removeAbandonedBuilds(): void {
  if (!existsSync(baselineConfig.dir)) return;
  for (const entry of readdirSync(baselineConfig.dir)) {
    const pid = Number(/\.partial-(\d+)$/.exec(entry)?.[1]);
    if (!pid || alive(pid)) continue;
    log(`removing ${relative(path.join(baselineConfig.dir, entry))}, left half-built by a run that was killed`);
    rmSync(path.join(baselineConfig.dir, entry), { recursive: true, force: true });
  }
}

/** The baseline of this run (BENCH_BASELINE): built, or reused from an earlier run. */
export async function prepareBaseline(): Promise<BaselineBuild> {
  const ref = baselineConfig.ref;
  if (!ref) throw new Error('BENCH_PASSES=baseline needs BENCH_BASELINE=<git ref>');
  const commit = resolveCommit(ref);
  const dir = path.join(baselineConfig.dir, commit);
  removeAbandonedBuilds();
  const reused = existsSync(path.join(dir, BUILT_MARKER));
  const others = existsSync(baselineConfig.dir) ? readdirSync(baselineConfig.dir).filter((entry) => entry !== commit) : [];
  if (others.length) log(`${relative(baselineConfig.dir)} also keeps ${others.join(', ')} (about 1 GB each: delete those no longer needed)`);
  if (reused) {
    log(`baseline ${ref} = ${commit.slice(0, 10)}: reusing the build in ${relative(dir)}`);
  } else {
    if (existsSync(dir)) {
      // Only a built folder is renamed into place: one without the marker was changed by hand.
      throw new Error(`${relative(dir)} is there but was not built by the bench (no ${BUILT_MARKER}): remove it`);
    }
    await buildBaseline(ref, commit, dir);
  }
  const built = JSON.parse(readFileSync(path.join(dir, BUILT_MARKER), 'utf8')) as { build: BenchResults['build']; buildSeconds: number };
  const node = path.join(dir, 'node_modules/.bin/node');
  const nodeVersion = nodeOfSameMajor(node, 'The baseline');
  if (nodeVersion !== process.version) {
    warnings.push(`The baseline runs on Node ${nodeVersion}, the current build on ${process.version}: part of any difference is Node's.`);
  }
  noteMigrationDifferences(dir);
  return { ref, commit, dir, node, nodeVersion, settings: { ...refillWithin(dir), ...baselineConfig.settings }, reused, ...built };
}

async function buildBaseline(ref: string, commit: string, dir: string): Promise<void> {
  const partial = `${dir}.partial-${process.pid}`;
  mkdirSync(baselineConfig.dir, { recursive: true });
  // Registered before the folder is made: a failed or interrupted build leaves nothing half-made.
  const removePartial = undoLater(`remove ${relative(partial)}`, () => rmSync(partial, { recursive: true, force: true }));
  try {
    const started = Date.now();
    mkdirSync(partial);
    log(`baseline ${ref} = ${commit.slice(0, 10)}: exporting its files to ${relative(partial)} (git archive)`);
    const archive = path.join(partial, '.baseline.tar');
    await succeed(runCommand('git archive', 'git', ['archive', '--format=tar', `--output=${archive}`, commit], { cwd: root }, STOP_WITHIN_MS), 'git archive');
    await succeed(runCommand('tar -x', 'tar', ['-xf', archive, '-C', partial], {}, STOP_WITHIN_MS), 'tar -x');
    rmSync(archive);
    log(`baseline: npm ci in ${relative(partial)} (a few minutes)…`);
    await npmCi(partial, `the baseline ${commit.slice(0, 10)}`, STOP_WITHIN_MS);
    const node = path.join(partial, 'node_modules/.bin/node');
    if (!existsSync(node)) {
      throw new Error(
        `npm ci at ${commit.slice(0, 10)} put no node in node_modules/.bin: the baseline must pin Node 24 as the work tree does ` +
          '(the `node` devDependency, with "allowScripts": { "node": true })',
      );
    }
    nodeOfSameMajor(node, 'The baseline');
    const build = await buildGateway(partial, `npm run build in the baseline ${commit.slice(0, 10)}`, STOP_WITHIN_MS);
    const buildSeconds = Math.round((Date.now() - started) / 1000);
    writeFileSync(path.join(partial, BUILT_MARKER), `${JSON.stringify({ ref, commit, builtAt: new Date().toISOString(), buildSeconds, build }, null, 2)}\n`);
    try {
      renameSync(partial, dir);
      log(`baseline built in ${buildSeconds} s: ${relative(dir)} (kept for the next run with this commit)`);
    } catch (error) {
      // Another run built the same commit meanwhile: its folder serves as well, and this one goes.
      if (!existsSync(path.join(dir, BUILT_MARKER))) throw error;
      log(`baseline built by another run meanwhile: using ${relative(dir)}`);
    }
  } finally {
    await removePartial();
  }
}

async function succeed(command: ReturnType<typeof runCommand>, label: string): Promise<void> {
  const { status, output } = await command;
  if (status !== 0) throw new Error(`${label} failed (${status}):\n${output}`);
}

/**
 * The bench's database is migrated by the work tree's migrations: a baseline from before a migration
 * runs on a schema newer than its own. Said in the report, since that may be part of a difference.
 */
function noteMigrationDifferences(dir: string): void {
  const migrations = (folder: string) => {
    const under = path.join(folder, 'prisma/migrations');
    return existsSync(under) ? readdirSync(under).filter((entry) => /^\d/.test(entry)) : [];
  };
  const theirs = new Set(migrations(dir));
  const ours = migrations(root);
  const newer = ours.filter((name) => !theirs.has(name));
  const unknown = [...theirs].filter((name) => !ours.includes(name));
  if (newer.length) warnings.push(`The baseline runs on the work tree's database schema, with migrations it does not have: ${newer.join(', ')}.`);
  if (unknown.length) warnings.push(`The baseline has migrations the work tree does not, which the bench's database lacks: ${unknown.join(', ')}.`);
}

/**
 * The bench lets budgets refill 1,000,000,000 points a second (servers.ts); a build from before that
 * was allowed (its bound was 1,000,000) would refuse to start with it, so it gets its own bound.
 */
function refillWithin(dir: string): Record<string, string> {
  const config = readFileSync(path.join(dir, 'dist/src/config.js'), 'utf8');
  const bound = /'COST_BUDGET_REFILL_PER_SECOND', 0\.001, ([\d_]+)\)/.exec(config)?.[1]?.replaceAll('_', '');
  return bound && Number(bound) < 1_000_000_000 ? { COST_BUDGET_REFILL_PER_SECOND: bound } : {};
}
