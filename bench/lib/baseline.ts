import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { BaselineBuild } from './baseline-build.js';
import { baselineConfig, gatewayNodeArgs, levelsFromTen, log, root, settings, sleep, warnings } from './config.js';
import { cell, countPerRequest, drive, wireCounterFor } from './matrix.js';
import type { Operation, Variant } from './operations.js';
import { BackendCpu, memoryMb, type ServerProcess } from './processes.js';
import type { BaselineCell, BaselineResult, BaselineSide, BaselineSideName, CellResult } from './report.js';
import { currentBuild, type GatewayBuild, type Gateways, send, serverFor, startGateways } from './servers.js';

/**
 * The baseline pass: the gateway as built from the work tree against the same gateway built from an
 * earlier commit (bench/lib/baseline-build.ts), in the same run, so that a change's effect on speed
 * is a ratio measured under the same conditions. Each selected operation goes to the gateway the
 * load pass sends it to (response cache, federation, traces…). First both sides' answers to the same
 * request are checked alike and their SQL statements counted on the wire; then each cell (operation ×
 * concurrency) drives the two alternately for a few rounds, the side that goes first alternating too:
 * on a shared, noisy host, drift then meets both alike, and how far the rounds' ratios spread says how
 * much of a difference is the host's noise. A process's own speed differs from start to start too
 * (where V8 puts what, what it optimises when), which rounds within one start cannot show: with
 * BENCH_BASELINE_STARTS both sides are started afresh that many times, each start running every round.
 */

const SIDES: BaselineSideName[] = ['baseline', 'current'];
type BySide<T> = Record<BaselineSideName, T>;

export async function baselinePass(
  url: string,
  databaseName: string,
  selected: Operation[],
  baselineBuild: BaselineBuild,
  currentCommit: { commit: string; dirty: boolean },
): Promise<BaselineResult> {
  const builds: BySide<GatewayBuild> = { baseline: baselineBuild, current: { ...currentBuild, settings: baselineConfig.currentSettings } };
  const levels = levelsFromTen();
  log(
    `baseline pass: ${selected.map((o) => o.id).join(',')} at c=${levels.join(',')}, ${baselineConfig.rounds} rounds of ` +
      `${settings.durationS} s per side, the work tree against ${baselineBuild.ref} (${baselineBuild.commit.slice(0, 10)})`,
  );
  const variants = await checkAndCount(url, selected, builds);

  const backend = new BackendCpu(databaseName);
  const measured = new Map<string, { operation: Operation; c: number; rounds: Round[] }>();
  const memory: BaselineResult['memoryMb'] = [];
  for (let start = 0; start < baselineConfig.starts; start++) {
    if (baselineConfig.starts > 1) log(`baseline pass: start ${start + 1} of ${baselineConfig.starts}, both sides' gateways started afresh`);
    const gateways: BySide<Gateways> = {
      baseline: await startGateways(url, '-baseline', gatewayNodeArgs, builds.baseline),
      current: await startGateways(url, '-current', gatewayNodeArgs, builds.current),
    };
    try {
      await sleep(1000);
      const rssAtStart = new Map(processesOf(gateways).map(({ server }) => [server.pid, memoryMb(server.pid)?.rss ?? null]));
      for (const operation of selected) {
        const variant = operation.gateway;
        const servers: BySide<ServerProcess> = { baseline: serverFor(gateways.baseline, variant), current: serverFor(gateways.current, variant) };
        for (const side of SIDES) {
          log(`warm-up ${variant.key} on the ${side} build (${settings.warmupS} s at c=${levels[0]})`);
          await drive(servers[side], variant, levels[0]!, settings.warmupS);
        }
        for (const c of levels) {
          const key = `${operation.id}\n${c}`;
          if (!measured.has(key)) measured.set(key, { operation, c, rounds: [] });
          measured.get(key)!.rounds.push(...(await measureRounds(variant, servers, c, backend, start)));
        }
      }
      // The gateways that served the selected operations (the plain one idles when only 1f is run).
      for (const { side, server } of processesOf(gateways)) {
        if (!selected.some((operation) => serverFor(gateways[side], operation.gateway) === server)) continue;
        memory.push({ server: server.name, side, start, rssAtStart: rssAtStart.get(server.pid) ?? null, peakRss: memoryMb(server.pid)?.peakRss ?? null });
      }
    } finally {
      for (const { server } of processesOf(gateways)) await server.stop();
    }
  }
  return {
    baseline: {
      ref: baselineBuild.ref,
      commit: baselineBuild.commit,
      dir: path.relative(root, baselineBuild.dir),
      node: baselineBuild.nodeVersion,
      settings: baselineBuild.settings ?? {},
      reused: baselineBuild.reused,
      buildSeconds: baselineBuild.buildSeconds,
      build: baselineBuild.build,
    },
    current: { ...currentCommit, node: process.version, settings: baselineConfig.currentSettings },
    rounds: baselineConfig.rounds,
    starts: baselineConfig.starts,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
    concurrency: levels,
    variants,
    cells: [...measured.values()].map(({ operation, c, rounds }) => summarizeCell(operation, c, rounds)),
    memoryMb: memory,
  };
}

type Round = BaselineCell['rounds'][number];

const processesOf = (gateways: BySide<Gateways>) =>
  SIDES.flatMap((side) => Object.values(gateways[side]).map((server: ServerProcess) => ({ side, server })));

const ratio = (current: number, baseline: number) => (baseline > 0 ? current / baseline : null);

/** One operation at one concurrency on one start's gateways: the rounds, each driving both sides once. */
async function measureRounds(variant: Variant, servers: BySide<ServerProcess>, c: number, backend: BackendCpu, start: number): Promise<Round[]> {
  const rounds: Round[] = [];
  for (let round = 0; round < baselineConfig.rounds; round++) {
    const order = round % 2 === 0 ? SIDES : [...SIDES].reverse();
    const measured: Partial<BySide<CellResult>> = {};
    for (const side of order) measured[side] = await cell(servers[side], variant, c, backend);
    const { baseline, current } = measured as BySide<CellResult>;
    rounds.push({ first: order[0]!, start, baseline, current });
    const which = baselineConfig.starts > 1 ? `start ${start + 1} ` : '';
    log(
      `${variant.key.padEnd(26)} c=${String(c).padEnd(3)} ${which}round ${round + 1}: baseline ${baseline.requestsPerSecond.toFixed(0)} req/s, ` +
        `current ${current.requestsPerSecond.toFixed(0)} req/s (${(current.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)}×)`,
    );
  }
  return rounds;
}

/** A cell's rounds of every start as one figure per side, and the ratios over all, round by round and start by start. */
function summarizeCell(operation: Operation, c: number, rounds: Round[]): BaselineCell {
  const variant = operation.gateway;
  const summary: BySide<BaselineSide> = {
    baseline: summarize(rounds.map((round) => round.baseline)),
    current: summarize(rounds.map((round) => round.current)),
  };
  const throughputRatio = ratio(summary.current.requestsPerSecond, summary.baseline.requestsPerSecond);
  const starts = [...new Set(rounds.map((round) => round.start))];
  const startRatios = starts
    .map((start) => {
      const of = rounds.filter((round) => round.start === start);
      return ratio(summarize(of.map((round) => round.current)).requestsPerSecond, summarize(of.map((round) => round.baseline)).requestsPerSecond);
    })
    .filter((value): value is number => value !== null);
  log(
    `${variant.key.padEnd(26)} c=${String(c).padEnd(3)} current ÷ baseline ${throughputRatio?.toFixed(2) ?? '–'}×` +
      `${starts.length > 1 ? ` (by start: ${startRatios.map((r) => r.toFixed(2)).join(', ')})` : ''}, ` +
      `CPU ${summary.baseline.serverCpuMsPerRequest?.toFixed(2)} → ${summary.current.serverCpuMsPerRequest?.toFixed(2)} ms/req, ` +
      `errors ${summary.baseline.errors} / ${summary.current.errors}`,
  );
  return {
    operation: operation.id,
    variant: variant.key,
    concurrency: c,
    ...summary,
    throughputRatio,
    roundRatios: rounds
      .map((round) => ratio(round.current.requestsPerSecond, round.baseline.requestsPerSecond))
      .filter((value): value is number => value !== null),
    startRatios,
    rounds,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** One side's rounds as one figure each: totals over the rounds, latency percentiles by their median. */
function summarize(rounds: CellResult[]): BaselineSide {
  const requests = rounds.reduce((sum, round) => sum + round.requests, 0);
  const seconds = rounds.reduce((sum, round) => sum + round.durationS, 0);
  // Per request over all the rounds: each round's figure weighted by the requests it served.
  const perRequest = (of: (round: CellResult) => number | null) =>
    requests > 0 && rounds.every((round) => of(round) !== null)
      ? rounds.reduce((sum, round) => sum + of(round)! * round.requests, 0) / requests
      : null;
  return {
    requests,
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    latencyMs: { p50: median(rounds.map((round) => round.latencyMs.p50)), p99: median(rounds.map((round) => round.latencyMs.p99)) },
    serverCpuMsPerRequest: perRequest((round) => round.serverCpuMsPerRequest),
    postgresCpuMsPerRequest: perRequest((round) => round.postgresCpuMsPerRequest),
    errors: rounds.reduce((sum, round) => sum + round.errors + round.non2xx + round.graphqlErrors, 0),
  };
}

/** A check request's answer as compared: its status, GraphQL errors, and its data (a REST answer's whole body). */
async function answerOf(server: ServerProcess, variant: Variant) {
  const answer = await send(server, variant, true);
  const body = answer.json as { data?: unknown; errors?: unknown } | undefined;
  return variant.kind === 'graphql'
    ? { status: answer.status, errors: body?.errors, data: body?.data }
    : { status: answer.status, errors: undefined, data: answer.json };
}

/**
 * Same status, no errors, same data; a write's data is not compared (each places an order of its own).
 * A refusal (`refused`): the same status, errors and data on both sides, carrying the refusal.
 */
function compare(variant: Variant, answers: BySide<Awaited<ReturnType<typeof answerOf>>>): { sameAnswer: boolean | null; detail?: string } {
  if (variant.refused !== undefined) {
    const shown = (side: BaselineSideName) => JSON.stringify(answers[side].errors ?? null).slice(0, 300);
    const unrefused = SIDES.filter((side) => !shown(side).includes(variant.refused!));
    if (unrefused.length) return { sameAnswer: false, detail: `not refused with ${variant.refused}: the ${unrefused.join(' and ')} build` };
    const alike =
      answers.baseline.status === answers.current.status &&
      isDeepStrictEqual(answers.baseline.errors, answers.current.errors) &&
      isDeepStrictEqual(answers.baseline.data, answers.current.data);
    return alike ? { sameAnswer: true } : { sameAnswer: false, detail: `baseline ${shown('baseline')} … current ${shown('current')}` };
  }
  const problems = SIDES.flatMap((side) => {
    const { status, errors } = answers[side];
    return status >= 300 || errors ? [`the ${side} build answered ${status}${errors ? ` with errors ${JSON.stringify(errors).slice(0, 300)}` : ''}`] : [];
  });
  if (answers.baseline.status !== answers.current.status) problems.push(`status ${answers.baseline.status} (baseline) against ${answers.current.status} (current)`);
  if (problems.length) return { sameAnswer: false, detail: problems.join('; ') };
  if (variant.write) return { sameAnswer: null, detail: 'a write: both answered without errors; their data is not compared (each places an order of its own)' };
  if (isDeepStrictEqual(answers.baseline.data, answers.current.data)) return { sameAnswer: true };
  const shown = (side: BaselineSideName) => JSON.stringify(answers[side].data).slice(0, 300);
  return { sameAnswer: false, detail: `baseline ${shown('baseline')} … current ${shown('current')}` };
}

/**
 * Both sides' gateways started through the wire counter (as the counting pass starts its own): each
 * operation's check request sent to both and compared, then its SQL statements counted on each.
 */
async function checkAndCount(url: string, selected: Operation[], builds: BySide<GatewayBuild>): Promise<BaselineResult['variants']> {
  const { counter, proxiedUrl } = await wireCounterFor(url);
  log(`baseline pass: both builds through the wire counter on ${new URL(proxiedUrl).host}: answers checked, SQL counted`);
  const gateways: Partial<BySide<Gateways>> = {};
  try {
    for (const side of SIDES) gateways[side] = await startGateways(proxiedUrl, `-${side}-counting`, [], builds[side]);
    const started = gateways as BySide<Gateways>;
    const results: BaselineResult['variants'] = [];
    for (const operation of selected) {
      const variant = operation.gateway;
      const servers: BySide<ServerProcess> = { baseline: serverFor(started.baseline, variant), current: serverFor(started.current, variant) };
      const check = compare(variant, { baseline: await answerOf(servers.baseline, variant), current: await answerOf(servers.current, variant) });
      if (check.sameAnswer === false) {
        const warning = `baseline pass, ${operation.id}: the two builds did not answer alike (${check.detail}); measured anyway`;
        warnings.push(warning);
        log(`WARNING: ${warning}`);
      }
      const perRequest = { baseline: await countPerRequest(servers.baseline, variant, counter), current: await countPerRequest(servers.current, variant, counter) };
      log(
        `  ${variant.key}: ${check.sameAnswer === true ? 'same answer' : check.sameAnswer === null ? 'answers not compared (a write)' : 'answers DIFFER'}; ` +
          `${perRequest.baseline.statements} statements/request on the baseline, ${perRequest.current.statements} on the current build`,
      );
      results.push({ operation: operation.id, title: operation.title, variant: variant.key, ...check, perRequest });
    }
    if (counter.opaqueConnections) warnings.push('Some database connections were encrypted; their statements were not counted.');
    return results;
  } finally {
    for (const side of SIDES) for (const server of Object.values(gateways[side] ?? {})) await server.stop();
    await counter.close();
  }
}
