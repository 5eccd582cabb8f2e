import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { checkNotInterrupted, undoLater } from './cleanup.js';
import { levelsFromTen, log, resultsDir, root, warnings } from './config.js';
import { dataScale } from './data.js';
import type { BenchResults, TenfoldResult } from './results.js';

/**
 * The reads again on ten times the data (100,000 pets, 500,000 orders), so that the scale targets are
 * checked in the same run as the others: a run of this bench of its own, with BENCH_SCALE=10, its
 * counting and load passes, the reads only, at the run's levels from c = 10. A run of its own because
 * everything the passes know of the data (its ids, the row pools, the answers checked alike) is fixed
 * at start-up by BENCH_SCALE; it makes and drops its own database and servers, with the same code as
 * built for this run.
 */
export const TENFOLD_SCALE = 10;

export async function tenfoldPass(readIds: string[]): Promise<TenfoldResult | undefined> {
  if (dataScale >= TENFOLD_SCALE) {
    log(`tenfold pass: skipped, this run's data set is already ${dataScale} times the usual`);
    return undefined;
  }
  checkNotInterrupted();
  const output = `.tenfold-${process.pid}`;
  const files = ['json', 'md'].map((extension) => path.join(resultsDir, `${output}.${extension}`));
  const removeFiles = undoLater('remove the tenfold pass’s result files', () => {
    for (const file of files) rmSync(file, { force: true });
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_SCALE: String(TENFOLD_SCALE),
    BENCH_PASSES: 'count,load',
    BENCH_ONLY: readIds.join(','),
    BENCH_CONCURRENCY: levelsFromTen().join(','),
    // The same dist/ as this run's passes measured.
    BENCH_SKIP_BUILD: '1',
    BENCH_OUTPUT: output,
  };
  log(`tenfold pass: the reads ${readIds.join(', ')} on ${TENFOLD_SCALE} times the data, in a run of their own`);
  const child = spawn(process.execPath, [...process.execArgv, path.join(root, 'bench/run.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // An interrupted run stops the child, which undoes what it made (its database, its servers).
  const stopChild = undoLater('stop the tenfold pass’s run', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  // Its log lines, marked as its own; its closing report is read from its file instead.
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('[bench')) console.log(`  tenfold ${line}`);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  await stopChild();
  if (code !== 0) {
    await removeFiles();
    checkNotInterrupted();
    // The hour of passes before it still makes a report: one that says this pass failed.
    warnings.push(`Tenfold pass: its run exited with ${code} (its own messages are above in the log); ten times the data is not measured.`);
    return undefined;
  }
  const results = JSON.parse(readFileSync(files[0]!, 'utf8')) as BenchResults;
  await removeFiles();
  warnings.push(...results.warnings.filter((warning) => !warning.startsWith('BENCH_SKIP_BUILD')).map((warning) => `Tenfold pass: ${warning}`));
  return {
    dataSet: results.dataSet,
    wallClockS: results.wallClockS,
    concurrency: results.settings.concurrency,
    operations: results.operations,
    variants: results.variants,
    cells: results.cells,
    peakRssMb: results.peakRssMb,
    ...(results.pageRounds ? { pageRounds: results.pageRounds } : {}),
  };
}
