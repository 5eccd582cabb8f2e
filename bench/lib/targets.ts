import { COUNT_LIMIT } from '../../src/pothos-plugins/paging.js';
import { operations, plainReads as reads } from './operations.js';
import type { BenchResults, CellResult, LadderResult, LadderRung } from './results.js';

/**
 * The targets the gateway is held to, each checked on the run's own figures, side by side: met, not
 * met (and which side's work holds it: the gateway's process or PostgreSQL, from CPU per request in
 * the same cells), or not measured (its pass, row or data set was not part of the run).
 */

const writes = operations.filter(({ gateway: g }) => g.write && !g.refused);
const entities = operations.find(({ gateway: g }) => g.federation);

const READ_RATIO = 1.2;
const WRITE_RATIO = 1.0;
const ENTITIES_RATIO = 1.0;
const MIX_UNCACHED_RATIO = 1.0;
const MIX_CACHED_RATIO = 2.0;
const SHARED_HIT_RATE = 0.9;
const PEAK_RSS_MB = 300;
/** Ten times the bench's usual pets: the data set the scale targets are about. */
const SCALED_PETS = 100_000;
/** A deep page "costs what the first page costs": within this share of its throughput. */
const DEEP_PAGE_SHARE = 0.9;
const LEVELS = [10, 50];

type Row = [target: string, measured: string, met: string, heldBy: string];

const x = (value: number | null | undefined) => (value === null || value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(2)}×`);
const ms = (value: number | null | undefined) => (value === null || value === undefined ? '–' : value.toFixed(2));
const verdict = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? 'yes' : '**no**');

export function renderTargets(results: BenchResults): string[] {
  const cell = (variant: string | undefined, c: number): CellResult | undefined =>
    variant ? results.cells.find((x) => x.variant === variant && x.concurrency === c) : undefined;
  const levels = LEVELS.filter((c) => results.settings.concurrency.includes(c));
  const ran = new Set(results.operations.map((operation) => operation.id));
  const rows: Row[] = [];

  /** Gateway ÷ PostGraphile at each level, whether each is at least `least`, and what holds the ones below. */
  const against = (gatewayKey: string, peerKey: string | undefined, least: number, title: string, extra = '', p99Too = false, id?: string) => {
    const pairs = levels.map((c) => ({ c, gw: cell(gatewayKey, c), pg: cell(peerKey, c) }));
    const measured = pairs.filter((pair) => pair.gw && pair.pg);
    if (!measured.length) {
      rows.push([title, '–', verdict(undefined), '']);
      return;
    }
    const ratios = measured.map(({ gw, pg }) => gw!.requestsPerSecond / pg!.requestsPerSecond);
    const p99 = measured.map(({ gw, pg }) => `${gw!.latencyMs.p99} / ${pg!.latencyMs.p99}`).join(', ');
    const below = measured.find((_, index) => ratios[index]! < least);
    const slower = p99Too ? measured.find(({ gw, pg }) => gw!.latencyMs.p99 > pg!.latencyMs.p99) : undefined;
    rows.push([
      title,
      `${ratios.map(x).join(' / ')} at c = ${measured.map((pair) => pair.c).join(' / ')}; p99 ms ${p99}${extra}`,
      verdict(!below && !slower),
      [
        below && heldBy(below.gw!, below.pg!, least),
        below && id && results.ladder && heldAtRung(results.ladder, id, below.c, least),
        slower && `p99 at c = ${slower.c}: ${slower.gw!.latencyMs.p99} against ${slower.pg!.latencyMs.p99} ms`,
        slower && id && results.ladder && p99AtRung(results.ladder, id, slower.c),
      ]
        .filter(Boolean)
        .join('; '),
    ]);
  };

  for (const operation of reads) {
    if (!ran.has(operation.id)) continue;
    against(operation.gateway.key, operation.postgraphile?.key, READ_RATIO, `${operation.id}. ${operation.title} ≥ ${READ_RATIO}×, p99 no worse`, '', true, operation.id);
  }
  for (const operation of writes) {
    if (!ran.has(operation.id)) continue;
    const statements = (key: string | undefined) => (key ? results.variants[key]?.perRequest?.statements : undefined);
    const counted = `; statements per write ${statements(operation.gateway.key) ?? '–'} / ${statements(operation.postgraphile?.key) ?? '–'}`;
    against(operation.gateway.key, operation.postgraphile?.key, WRITE_RATIO, `${operation.id}. ${operation.title} ≥ ${WRITE_RATIO.toFixed(1)}×`, counted, false, operation.id);
  }
  if (entities && ran.has(entities.id)) {
    against(entities.gateway.key, entities.postgraphile?.key, ENTITIES_RATIO, `${entities.id}. ${entities.title} ≥ ${ENTITIES_RATIO.toFixed(1)}× PostGraphile’s page of 50`);
  }

  rows.push(...mixRows(results));
  rows.push(...scaleRows(results));
  rows.push(memoryRow(results));

  const lines = ['## Targets', ''];
  lines.push(
    'Each target checked on this run’s figures (gateway ÷ PostGraphile in the same run; p99 ms gateway / PostGraphile). ' +
      'Held by: the side that spends more per request in the first cell below its target, from the same cells’ CPU ' +
      '(the gateway’s process against PostGraphile’s, and PostgreSQL’s for each)' +
      (results.ladder
        ? '; and, where the ladder below answered the operation, the first rung of the gateway’s machinery (the data alone, the write’s rules, GraphQL execution, the gateway) over what the target allows, in the ladder’s own cells (for a p99 behind, the first rung whose p99 is behind PostGraphile’s there).'
        : '.'),
  );
  lines.push('');
  lines.push('| Target | This run | Met | Held by |');
  lines.push('|---|---|---|---|');
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  lines.push('');
  return lines;
}

/**
 * Which side's work keeps a cell below its target. Both servers share the machine's CPUs with
 * PostgreSQL and the load generator, so a ratio follows the CPU each request costs altogether (its
 * server's and PostgreSQL's): shown beside what the target would need, and the part that is higher.
 */
function heldBy(gw: CellResult, pg: CellResult, least: number): string {
  const { serverCpuMsPerRequest: gs, postgresCpuMsPerRequest: gd } = gw;
  const { serverCpuMsPerRequest: ps, postgresCpuMsPerRequest: pd } = pg;
  if (gs === null || gd === null || ps === null || pd === null) return `c = ${gw.concurrency}: CPU not measured`;
  const needed = (ps + pd) / least;
  // Within a twentieth of each other, two figures are level: a cell's CPU moves that much from run to run.
  const higher = [gs > ps * 1.05 && 'the gateway’s process', gd > pd * 1.05 && 'PostgreSQL'].filter(Boolean).join(' and ');
  const figures =
    `CPU ms per request, gateway / PostGraphile: server ${ms(gs)} / ${ms(ps)}, PostgreSQL ${ms(gd)} / ${ms(pd)}, ` +
    `together ${ms(gs + gd)} / ${ms(ps + pd)}, where ${least.toFixed(1)}× needs ${ms(needed)} at most`;
  if (gs + gd <= needed) return `c = ${gw.concurrency}: waiting, not work (${figures})`;
  return `c = ${gw.concurrency}: ${higher || 'both sides alike'} (${figures})`;
}

/**
 * The machinery the gateway's answer is built of, least first: the data alone (one statement), then the
 * write's rules (the domain function) and GraphQL execution (the schema in a bare yoga), then the
 * gateway. A read's plan reads with statements of its own, not through graphql-js: its chain is the
 * statement, then the gateway.
 */
const WRITE_CHAIN: LadderRung[] = ['sql', 'domain', 'bare-yoga', 'gateway'];
const READ_CHAIN: LadderRung[] = ['sql', 'gateway'];

/**
 * The ladder's cells of one operation at one concurrency, by one figure of each: PostGraphile's, and
 * each rung's of the gateway's chain that was measured, in the chain's order.
 */
function ladderChain(ladder: LadderResult, id: string, c: number, figure: (cell: CellResult) => number | undefined) {
  const at = (rung: LadderRung) => ladder.cells.find((x) => x.operation === id && x.rung === rung && x.concurrency === c);
  const of = (rung: LadderRung) => {
    const cell = at(rung);
    return cell ? figure(cell) : undefined;
  };
  const write = ladder.operations.find((operation) => operation.id === id)?.write;
  const chain = (write ? WRITE_CHAIN : READ_CHAIN).flatMap((rung) => {
    const value = of(rung);
    const label = ladder.rungs.find((candidate) => candidate.rung === rung)?.label ?? rung;
    return value === undefined ? [] : [{ label, value }];
  });
  return { peer: of('postgraphile'), chain };
}

/**
 * Which rung of the ladder holds a cell below its target: in the ladder's own cells at the same
 * concurrency, the first rung of the gateway's chain whose CPU per request (its server's and
 * PostgreSQL's) is over what the target allows against the ladder's PostGraphile.
 */
function heldAtRung(ladder: LadderResult, id: string, c: number, least: number): string | undefined {
  const cpu = (cell: CellResult) =>
    cell.serverCpuMsPerRequest !== null && cell.postgresCpuMsPerRequest !== null ? cell.serverCpuMsPerRequest + cell.postgresCpuMsPerRequest : undefined;
  const { peer, chain } = ladderChain(ladder, id, c, cpu);
  if (peer === undefined || chain.length === 0) return undefined;
  const needed = peer / least;
  const first = chain.find(({ value }) => value > needed);
  const figures = `${chain.map(({ label, value }) => `${label} ${ms(value)}`).join(', ')}; PostGraphile ${ms(peer)}, where ${least.toFixed(1)}× needs ${ms(needed)} at most`;
  return `ladder at c = ${c}: ${first ? `from the rung ${first.label}` : 'no rung (waiting, not work)'} (CPU ms per request, server and PostgreSQL: ${figures})`;
}

/**
 * Where a read's tail comes from, when its p99 is behind: in the ladder's own cells at the same
 * concurrency, the first rung of the gateway's chain whose p99 is over the ladder's PostGraphile's.
 */
function p99AtRung(ladder: LadderResult, id: string, c: number): string | undefined {
  const { peer, chain } = ladderChain(ladder, id, c, (cell) => cell.latencyMs.p99);
  if (peer === undefined || chain.length === 0) return undefined;
  const first = chain.find(({ value }) => value > peer);
  const figures = `p99 ms: ${chain.map(({ label, value }) => `${label} ${value}`).join(', ')}; PostGraphile ${peer}`;
  return `ladder at c = ${c}: ${first ? `the tail from the rung ${first.label}` : 'no rung behind in p99 (the load cell alone)'} (${figures})`;
}

function mixRows(results: BenchResults): Row[] {
  const mix = results.mix ?? [];
  const peer = mix.find((result) => result.server === 'postgraphile');
  const of = (server: string) => mix.find((result) => result.server === server);
  const ratioOf = (server: string) => {
    const result = of(server);
    return result && peer ? result.requestsPerSecond / peer.requestsPerSecond : undefined;
  };
  const cpu = (server: string) => {
    const result = of(server);
    return result && peer
      ? `the gateway’s process ${ms(result.serverCpuMsPerRequest)} / ${ms(peer.serverCpuMsPerRequest)} ms CPU per request, PostgreSQL ${ms(result.postgresCpuMsPerRequest)} / ${ms(peer.postgresCpuMsPerRequest)}`
      : '';
  };
  const rows: Row[] = [];
  const uncached = ratioOf('gateway');
  rows.push([`The mix, uncached ≥ ${MIX_UNCACHED_RATIO.toFixed(1)}×`, x(uncached), verdict(uncached === undefined ? undefined : uncached >= MIX_UNCACHED_RATIO), uncached !== undefined && uncached < MIX_UNCACHED_RATIO ? cpu('gateway') : '']);
  const cached = ratioOf('gateway-cached');
  const hits = of('gateway-cached')?.hitShare;
  const hitsOf = (hitShare: number | null | undefined) => `${hitShare == null ? '–' : `${(hitShare * 100).toFixed(0)}%`} hits`;
  rows.push([
    `The mix, response cache on ≥ ${MIX_CACHED_RATIO.toFixed(1)}×`,
    cached === undefined ? '–' : `${x(cached)}, ${hitsOf(hits)}`,
    verdict(cached === undefined ? undefined : cached >= MIX_CACHED_RATIO),
    cached !== undefined && cached < MIX_CACHED_RATIO ? cachedHeldBy(ratioOf('gateway-cached-local'), hitsOf(of('gateway-cached-local')?.hitShare), cpu) : '',
  ]);
  const pairHits = of('gateway-cached-pair')?.hitShare;
  const share = pairHits != null && hits ? pairHits / hits : undefined;
  rows.push([
    `Two cached instances: hit rate ≥ ${SHARED_HIT_RATE}× one instance’s`,
    share === undefined ? '–' : `${x(share)} (${(pairHits! * 100).toFixed(0)}% against ${(hits! * 100).toFixed(0)}%); throughput ${x(ratioOf('gateway-cached-pair'))}`,
    verdict(share === undefined ? undefined : share >= SHARED_HIT_RATE),
    '',
  ]);
  const gateways = mix.filter((result) => result.server !== 'postgraphile');
  const stale = gateways.reduce((sum, result) => sum + result.stale, 0);
  const checked = gateways.reduce((sum, result) => sum + result.checkedNames, 0);
  rows.push([
    'No stale answer in the mix',
    gateways.length ? `${stale} of ${checked.toLocaleString('en-US')} names checked` : '–',
    verdict(gateways.length ? stale === 0 : undefined),
    '',
  ]);
  return rows;
}

/**
 * Which rung holds the cached mix: the cache itself, when even one instance keeping everything in its
 * own memory (gateway-cached-local) is below the target; else what sharing through Redis adds.
 */
function cachedHeldBy(local: number | undefined, localHits: string, cpu: (server: string) => string): string {
  const onRedis = `with Redis ${cpu('gateway-cached')} (a hit reads the write log there)`;
  if (local === undefined) return onRedis;
  const inMemory = `in its own memory (one instance, nothing shared) ${x(local)}, ${localHits}; ${cpu('gateway-cached-local')}`;
  return local < MIX_CACHED_RATIO ? `the cache itself: ${inMemory}; ${onRedis}` : `sharing through Redis: ${inMemory}; ${onRedis}`;
}

/**
 * Ten times the data: on a run with that data set (BENCH_SCALE=10) its own cells, whose reads the rows
 * above already hold to their targets; on the usual data, the tenfold pass's cells (bench/lib/tenfold.ts),
 * whose reads are held to the same ratio here.
 */
function scaleRows(results: BenchResults): Row[] {
  const scaled = (results.dataSet.pets ?? 0) >= SCALED_PETS;
  const source = scaled
    ? { dataSet: results.dataSet, operations: results.operations, cells: results.cells, concurrency: results.settings.concurrency, pageRounds: results.pageRounds }
    : results.tenfold;
  if (!source) {
    return [['Ten times the data: the same targets, deep pages, a bounded count', 'not measured: the tenfold pass did not run', verdict(undefined), '']];
  }
  const cell = (variant: string | undefined, c: number) =>
    variant ? source.cells.find((x) => x.variant === variant && x.concurrency === c) : undefined;
  const levels = LEVELS.filter((c) => source.concurrency.includes(c));
  const ran = new Set(source.operations.map((operation) => operation.id));
  const rows: Row[] = [];
  if (!scaled) {
    const measured = reads
      .filter((operation) => ran.has(operation.id))
      .flatMap((operation) => {
        const pairs = levels.map((c) => ({ c, gw: cell(operation.gateway.key, c), pg: cell(operation.postgraphile?.key, c) })).filter((pair) => pair.gw && pair.pg);
        return pairs.length ? [{ operation, pairs, ratios: pairs.map(({ gw, pg }) => gw!.requestsPerSecond / pg!.requestsPerSecond) }] : [];
      });
    const below = measured.flatMap(({ operation, pairs, ratios }) => pairs.filter((_, index) => ratios[index]! < READ_RATIO).map((pair) => ({ operation, ...pair })))[0];
    rows.push([
      `Ten times the data (${source.dataSet.pets?.toLocaleString('en-US')} pets, ${source.dataSet.orders?.toLocaleString('en-US')} orders): every read ≥ ${READ_RATIO}×`,
      measured.length ? `${measured.map(({ operation, ratios }) => `${operation.id} ${ratios.map(x).join(' / ')}`).join('; ')} at c = ${levels.join(' / ')}` : '–',
      verdict(measured.length ? !below : undefined),
      below ? `${below.operation.id}: ${heldBy(below.gw!, below.pg!, READ_RATIO)}` : '',
    ]);
  }
  const first = operations.find((operation) => operation.id === '4b');
  const deep = operations.find((operation) => operation.id === '4d');
  // Side by side where the pages were driven in rounds (their throughput over all rounds), else the load pass's two cells.
  const sideBySide = levels.map((c) => source.pageRounds?.find((level) => level.concurrency === c)).filter((level) => level !== undefined);
  const shares = sideBySide.length
    ? sideBySide.map(({ rounds }) => sum(rounds.map((round) => round.deep.requestsPerSecond)) / sum(rounds.map((round) => round.first.requestsPerSecond)))
    : levels.map((c) => {
        const a = cell(first?.gateway.key, c);
        const b = cell(deep?.gateway.key, c);
        return a && b ? b.requestsPerSecond / a.requestsPerSecond : undefined;
      });
  const measuredShares = shares.filter((share): share is number => share !== undefined);
  const pageLevels = sideBySide.length ? sideBySide.map((level) => level.concurrency) : levels;
  const roundsSaid = sideBySide.length
    ? `, side by side in ${sideBySide[0]!.rounds.length} rounds each (${sideBySide.map(({ rounds }) => rounds.map((round) => (round.deep.requestsPerSecond / round.first.requestsPerSecond).toFixed(2)).join(', ')).join('; ')})`
    : '';
  const counted = operations.find((operation) => operation.id === '4t');
  const gw = cell(counted?.gateway.key, levels[0] ?? 10);
  const pg = cell(counted?.postgraphile?.key, levels[0] ?? 10);
  const on = scaled ? '' : ', ten times the data';
  rows.push(
    [
      `${deep?.title ?? 'A deep page'} costs what the first page costs (≥ ${DEEP_PAGE_SHARE}× its throughput${on})`,
      measuredShares.length ? `${measuredShares.map(x).join(' / ')} at c = ${pageLevels.join(' / ')}${roundsSaid}` : '–',
      verdict(measuredShares.length ? measuredShares.every((share) => share >= DEEP_PAGE_SHARE) : undefined),
      '',
    ],
    [
      `\`totalCount\` bounded: it counts ${COUNT_LIMIT.toLocaleString('en-US')} rows at most, PostGraphile every row${on}`,
      gw && pg ? `PostgreSQL ${ms(gw.postgresCpuMsPerRequest)} / ${ms(pg.postgresCpuMsPerRequest)} ms per request at c = ${gw.concurrency}` : '–',
      verdict(gw && pg && gw.postgresCpuMsPerRequest !== null && pg.postgresCpuMsPerRequest !== null ? gw.postgresCpuMsPerRequest < pg.postgresCpuMsPerRequest : undefined),
      '',
    ],
  );
  return rows;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

function memoryRow(results: BenchResults): Row {
  const peaks: Array<[string, number | null | undefined]> = [
    ['load pass', results.peakRssMb.gateway],
    ['response cache', results.peakRssMb.cachedGateway],
    ['Redis', results.peakRssMb.sharedCacheGateway],
    ['subgraph', results.peakRssMb.federationGateway],
    ['ladder', results.ladder?.peakRssMb.gateway],
    ['ten times the data', results.tenfold?.peakRssMb.gateway],
    ...(results.live ?? []).map((live): [string, number | null] => [`${live.mode} pass`, live.rssMb.peak]),
  ];
  const known = peaks.filter((peak): peak is [string, number] => typeof peak[1] === 'number');
  const highest = Math.max(...known.map(([, mb]) => mb));
  return [
    `Peak RSS ≤ ${PEAK_RSS_MB} MB in every pass`,
    known.length ? known.map(([pass, mb]) => `${pass} ${mb.toFixed(0)}`).join(', ') + ' MB' : '–',
    verdict(known.length ? highest <= PEAK_RSS_MB : undefined),
    '',
  ];
}
