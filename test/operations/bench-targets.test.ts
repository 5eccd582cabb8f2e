import { describe, expect, it } from 'vitest';
import type { BenchResults, CellResult, LadderResult, LadderRung, MixResult } from '../../bench/lib/report.js';
import { renderTargets } from '../../bench/lib/targets.js';

/**
 * The bench report's targets, checked on a run's figures: a run made up here, so that each verdict
 * and what it names as holding a cell below its target follow from figures the test chose.
 */

function cellOf(variant: string, target: 'gateway' | 'postgraphile', concurrency: number, figures: Partial<CellResult>): CellResult {
  return {
    variant,
    target,
    concurrency,
    durationS: 8,
    requests: 8000,
    requestsPerSecond: 1000,
    latencyMs: { p50: 5, p90: 8, p99: 10, max: 20, mean: 5 },
    errors: 0,
    timeouts: 0,
    non2xx: 0,
    graphqlErrors: 0,
    statusCodes: { 200: 8000 },
    serverCpuMsPerRequest: 0.5,
    postgresCpuMsPerRequest: 0.2,
    machineCpuBusyPercent: 90,
    loadGeneratorCpuPercent: 10,
    otherProcessesCpuPercent: 1,
    serverRssMb: 200,
    serverPeakRssMbSoFar: 200,
    ...figures,
  };
}

function mixOf(server: MixResult['server'], requestsPerSecond: number, figures: Partial<MixResult> = {}): MixResult {
  return {
    server,
    requests: requestsPerSecond * 10,
    requestsPerSecond,
    latencyMs: { p50: 4, p99: 20 },
    writes: 100,
    errors: 0,
    stale: 0,
    checkedNames: 1000,
    ownWriteReads: 10,
    hitShare: null,
    serverCpuMsPerRequest: 0.5,
    postgresCpuMsPerRequest: 0.2,
    loadGeneratorCpuPercent: 10,
    byKind: {},
    ...figures,
  };
}

function run(cells: CellResult[], extra: Partial<BenchResults> = {}): BenchResults {
  return {
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: '2026-01-01T00:30:00Z',
    wallClockS: 1800,
    settings: { durationS: 8, warmupS: 5, concurrency: [1, 10, 50], countRequests: 20 },
    machine: { nproc: 2, cpuModel: 'test', memoryGb: 8, kernel: 'test', loadAverageAtStart: [0, 0, 0], loadAverageAtEnd: [0, 0, 0] },
    software: {},
    git: { commit: '0'.repeat(40), dirty: false },
    build: { ok: true, typeErrors: [] },
    counting: { method: '', pgStatStatements: '' },
    dataSet: { categories: 50, pets: 10_000, orders: 50_000 },
    operations: [
      { id: '4b', title: 'orders(first: 50), GraphQL', gateway: 'gateway:orders', postgraphile: 'postgraphile:orders', sameData: true },
      { id: '7', title: 'updateInventory: a stock count (write)', gateway: 'gateway:stock', postgraphile: 'postgraphile:stock', sameData: null },
    ],
    variants: {},
    cells,
    peakRssMb: { gateway: 260, postgraphile: 410 },
    rssAtStartMb: { gateway: 150, postgraphile: 200 },
    warnings: [],
    ...extra,
  };
}

/** The ladder's rungs as the report names them, least machinery first after the peer. */
const LADDER_RUNGS: LadderResult['rungs'] = [
  { rung: 'postgraphile', label: 'PostGraphile 5', what: '', answers: 'both' },
  { rung: 'sql', label: 'one SQL statement', what: '', answers: 'both' },
  { rung: 'domain', label: 'domain function', what: '', answers: 'writes' },
  { rung: 'bare-yoga', label: 'schema in bare yoga', what: '', answers: 'both' },
  { rung: 'gateway', label: 'gateway as built', what: '', answers: 'both' },
];

/** One rung's cell of the ladder at c = 10, for the operation `operation`. */
const ladderCell = (operation: string, rung: LadderRung, figures: Partial<CellResult>) => ({
  ...cellOf(`ladder-${rung}`, rung === 'postgraphile' ? 'postgraphile' : 'gateway', 10, figures),
  operation,
  rung,
});

const rowOf = (lines: string[], start: string) => {
  const row = lines.find((line) => line.startsWith(`| ${start}`));
  if (!row) throw new Error(`no row ${start} in:\n${lines.join('\n')}`);
  return row.split(' | ').map((part) => part.replace(/^\| | \|$/g, ''));
};

describe('the bench report’s targets', () => {
  it('holds a read below 1.2× at any level to its target, and names the side whose CPU holds it', () => {
    const lines = renderTargets(
      run([
        cellOf('gateway:orders', 'gateway', 10, { requestsPerSecond: 1300, serverCpuMsPerRequest: 0.4 }),
        cellOf('postgraphile:orders', 'postgraphile', 10, { requestsPerSecond: 1000 }),
        cellOf('gateway:orders', 'gateway', 50, { requestsPerSecond: 1100, serverCpuMsPerRequest: 0.6, postgresCpuMsPerRequest: 0.2 }),
        cellOf('postgraphile:orders', 'postgraphile', 50, { requestsPerSecond: 1000, serverCpuMsPerRequest: 0.4, postgresCpuMsPerRequest: 0.2 }),
      ]),
    );
    const [, measured, met, heldBy] = rowOf(lines, '4b.');
    expect(measured).toContain('1.30× / 1.10× at c = 10 / 50');
    expect(met).toBe('**no**');
    expect(heldBy).toMatch(/^c = 50: the gateway’s process \(CPU ms per request, gateway \/ PostGraphile: server 0\.60 \/ 0\.40, PostgreSQL 0\.20 \/ 0\.20/);
    expect(heldBy).toContain('where 1.2× needs 0.50 at most');
  });

  it('counts a read ahead in throughput but behind in p99 as not met', () => {
    const lines = renderTargets(
      run([
        cellOf('gateway:orders', 'gateway', 10, { requestsPerSecond: 1500, latencyMs: { p50: 5, p90: 8, p99: 30, max: 40, mean: 6 } }),
        cellOf('postgraphile:orders', 'postgraphile', 10, { requestsPerSecond: 1000 }),
      ]),
    );
    const [, , met, heldBy] = rowOf(lines, '4b.');
    expect(met).toBe('**no**');
    expect(heldBy).toBe('p99 at c = 10: 30 against 10 ms');
  });

  it('meets a write at 1.0× and more, and says what no cell measured', () => {
    const lines = renderTargets(
      run([
        cellOf('gateway:stock', 'gateway', 10, { requestsPerSecond: 1000 }),
        cellOf('postgraphile:stock', 'postgraphile', 10, { requestsPerSecond: 1000 }),
        cellOf('gateway:stock', 'gateway', 50, { requestsPerSecond: 1200 }),
        cellOf('postgraphile:stock', 'postgraphile', 50, { requestsPerSecond: 1000 }),
      ]),
    );
    expect(rowOf(lines, '7.')[2]).toBe('yes');
    expect(rowOf(lines, '4b.')[2]).toBe('not measured');
    expect(rowOf(lines, 'The mix, uncached')[2]).toBe('not measured');
    expect(rowOf(lines, 'Ten times the data').slice(1, 3)).toEqual(['not measured: the tenfold pass did not run', 'not measured']);
  });

  it('holds the reads on ten times the data to the same ratio, deep pages to the first page’s cost, and the count to PostGraphile’s', () => {
    const orders = (id: string, title: string, key: string) => ({ id, title, gateway: `gateway:${key}`, postgraphile: `postgraphile:${key}`, sameData: true });
    const pair = (key: string, c: number, gateway: Partial<CellResult>, postgraphile: Partial<CellResult> = {}) => [
      cellOf(`gateway:${key}`, 'gateway', c, gateway),
      cellOf(`postgraphile:${key}`, 'postgraphile', c, postgraphile),
    ];
    const tenfold: BenchResults['tenfold'] = {
      dataSet: { categories: 50, pets: 100_000, orders: 500_000 },
      wallClockS: 420,
      concurrency: [10, 50],
      operations: [
        orders('4b', 'orders(first: 50), GraphQL', 'orders'),
        orders('4d', 'orders(first: 50) after the 10,000th, GraphQL', 'deep-orders'),
        orders('4t', 'orders(first: 50) with totalCount, GraphQL', 'counted-orders'),
      ],
      variants: {},
      cells: [
        ...pair('orders', 10, { requestsPerSecond: 1500 }),
        ...pair('orders', 50, { requestsPerSecond: 1600 }),
        ...pair('deep-orders', 10, { requestsPerSecond: 1400 }),
        // Below 1.2× at c = 50, where PostgreSQL's work is the gateway's.
        ...pair('deep-orders', 50, { requestsPerSecond: 1100, postgresCpuMsPerRequest: 0.4 }, { postgresCpuMsPerRequest: 0.2 }),
        ...pair('counted-orders', 10, { requestsPerSecond: 3000, postgresCpuMsPerRequest: 0.1 }, { postgresCpuMsPerRequest: 20 }),
        ...pair('counted-orders', 50, { requestsPerSecond: 3000 }),
      ],
      peakRssMb: { gateway: 280, postgraphile: 400 },
    };
    const lines = renderTargets(run([], { tenfold }));
    const [title, measured, met, heldBy] = rowOf(lines, 'Ten times the data');
    expect(title).toContain('100,000 pets, 500,000 orders');
    expect(measured).toBe('4b 1.50× / 1.60×; 4d 1.40× / 1.10×; 4t 3.00× / 3.00× at c = 10 / 50');
    expect(met).toBe('**no**');
    expect(heldBy).toMatch(/^4d: c = 50: PostgreSQL \(CPU ms per request/);
    // 1,400 of 1,500 at c = 10, 1,100 of 1,600 at c = 50.
    expect(rowOf(lines, 'orders(first: 50) after the 10,000th').slice(1, 3)).toEqual(['0.93× / 0.69× at c = 10 / 50', '**no**']);
    expect(rowOf(lines, '`totalCount` bounded').slice(1, 3)).toEqual(['PostgreSQL 0.10 / 20.00 ms per request at c = 10', 'yes']);
    expect(rowOf(lines, 'Peak RSS')[1]).toContain('ten times the data 280');

    // Driven side by side in rounds, the pages are held to those rounds, not to the load pass's two cells.
    const roundOf = (c: number, first: number, deep: number, deepWentFirst: boolean) => ({
      first: cellOf('gateway:orders', 'gateway', c, { requestsPerSecond: first }),
      deep: cellOf('gateway:deep-orders', 'gateway', c, { requestsPerSecond: deep }),
      deepWentFirst,
    });
    const pageRounds = [
      { concurrency: 10, rounds: [roundOf(10, 1000, 950, false), roundOf(10, 1100, 1000, true), roundOf(10, 900, 900, false)] },
      { concurrency: 50, rounds: [roundOf(50, 1000, 800, false), roundOf(50, 1000, 900, true), roundOf(50, 1000, 850, false)] },
    ];
    const sideBySide = renderTargets(run([], { tenfold: { ...tenfold, pageRounds } }));
    // 2,850 of 3,000 at c = 10; 2,550 of 3,000 at c = 50.
    expect(rowOf(sideBySide, 'orders(first: 50) after the 10,000th').slice(1, 3)).toEqual([
      '0.95× / 0.85× at c = 10 / 50, side by side in 3 rounds each (0.95, 0.91, 1.00; 0.80, 0.90, 0.85)',
      '**no**',
    ]);
    // Every level at 0.92×: met, though the load pass's cells (0.93× / 0.69×) were not.
    const allMet = renderTargets(run([], { tenfold: { ...tenfold, pageRounds: pageRounds.map((level) => ({ ...level, rounds: level.rounds.map((round) => ({ ...round, deep: { ...round.deep, requestsPerSecond: round.first.requestsPerSecond * 0.92 } })) })) } }));
    expect(rowOf(allMet, 'orders(first: 50) after the 10,000th').slice(1, 3)).toEqual([
      '0.92× / 0.92× at c = 10 / 50, side by side in 3 rounds each (0.92, 0.92, 0.92; 0.92, 0.92, 0.92)',
      'yes',
    ]);
  });

  it('names the rung of the ladder that holds a write below its target', () => {
    const rungCell = (rung: LadderRung, server: number, postgres: number) =>
      ladderCell('7', rung, { serverCpuMsPerRequest: server, postgresCpuMsPerRequest: postgres });
    const ladder: LadderResult = {
      rungs: LADDER_RUNGS,
      operations: [{ id: '7', title: 'updateInventory: a stock count (write)', write: true, differs: [] }],
      cells: [rungCell('postgraphile', 0.25, 0.1), rungCell('sql', 0.06, 0.1), rungCell('domain', 0.07, 0.1), rungCell('bare-yoga', 0.3, 0.12), rungCell('gateway', 0.28, 0.12)],
      peakRssMb: {},
    };
    const cells = [
      cellOf('gateway:stock', 'gateway', 10, { requestsPerSecond: 800 }),
      cellOf('postgraphile:stock', 'postgraphile', 10, { requestsPerSecond: 1000 }),
    ];
    const [, , met, heldBy] = rowOf(renderTargets(run(cells, { ladder })), '7.');
    expect(met).toBe('**no**');
    // The data and the write's rules (0.16, 0.17) are within PostGraphile's 0.35; GraphQL execution (0.42) is not.
    expect(heldBy).toContain(
      'ladder at c = 10: from the rung schema in bare yoga (CPU ms per request, server and PostgreSQL: one SQL statement 0.16, ' +
        'domain function 0.17, schema in bare yoga 0.42, gateway as built 0.40; PostGraphile 0.35, where 1.0× needs 0.35 at most)',
    );
    // Without a ladder, only the sides.
    expect(rowOf(renderTargets(run(cells)), '7.')[3]).not.toContain('ladder');
  });

  it('names the rung of the ladder a read’s tail comes from, when its p99 is behind', () => {
    const rungCell = (rung: LadderRung, p99: number) => ladderCell('4b', rung, { latencyMs: { p50: 5, p90: 8, p99, max: 60, mean: 6 } });
    const ladderWith = (gatewayP99: number): LadderResult => ({
      rungs: LADDER_RUNGS,
      operations: [{ id: '4b', title: 'orders(first: 50), GraphQL', write: false, differs: [] }],
      // The bare yoga's tail is not on a planned read's way: its chain is the statement, then the gateway.
      cells: [rungCell('postgraphile', 33), rungCell('sql', 29), rungCell('bare-yoga', 55), rungCell('gateway', gatewayP99)],
      peakRssMb: {},
    });
    const cells = [
      cellOf('gateway:orders', 'gateway', 10, { requestsPerSecond: 1300, latencyMs: { p50: 11, p90: 20, p99: 37, max: 60, mean: 12 } }),
      cellOf('postgraphile:orders', 'postgraphile', 10, { requestsPerSecond: 1000, latencyMs: { p50: 16, p90: 25, p99: 36, max: 60, mean: 16 } }),
    ];
    const [, , met, heldBy] = rowOf(renderTargets(run(cells, { ladder: ladderWith(44) })), '4b.');
    expect(met).toBe('**no**');
    expect(heldBy).toBe(
      'p99 at c = 10: 37 against 36 ms; ladder at c = 10: the tail from the rung gateway as built ' +
        '(p99 ms: one SQL statement 29, gateway as built 44; PostGraphile 33)',
    );
    // A ladder whose cells do not show the tail says so, rather than name a rung.
    expect(rowOf(renderTargets(run(cells, { ladder: ladderWith(30) })), '4b.')[3]).toContain(
      'ladder at c = 10: no rung behind in p99 (the load cell alone) (p99 ms: one SQL statement 29, gateway as built 30; PostGraphile 33)',
    );
  });

  it('checks the mix, shared hits, staleness and memory', () => {
    const lines = renderTargets(
      run([], {
        mix: [
          mixOf('gateway', 1100),
          mixOf('gateway-cached', 1500, { hitShare: 0.7 }),
          mixOf('gateway-cached-pair', 1400, { hitShare: 0.6, stale: 1 }),
          mixOf('postgraphile', 1000),
        ],
        peakRssMb: { gateway: 260, cachedGateway: 310, postgraphile: 410 },
      }),
    );
    expect(rowOf(lines, 'The mix, uncached').slice(1, 3)).toEqual(['1.10×', 'yes']);
    expect(rowOf(lines, 'The mix, response cache on').slice(1, 3)).toEqual(['1.50×, 70% hits', '**no**']);
    expect(rowOf(lines, 'Two cached instances').slice(1, 3)).toEqual(['0.86× (60% against 70%); throughput 1.40×', '**no**']);
    expect(rowOf(lines, 'No stale answer').slice(1, 3)).toEqual(['1 of 3,000 names checked', '**no**']);
    expect(rowOf(lines, 'Peak RSS').slice(1, 3)).toEqual(['load pass 260, response cache 310 MB', '**no**']);
    // Without the in-memory cell, the cached row can only name what the Redis one spends.
    expect(rowOf(lines, 'The mix, response cache on')[3]).toBe(
      'with Redis the gateway’s process 0.50 / 0.50 ms CPU per request, PostgreSQL 0.20 / 0.20 (a hit reads the write log there)',
    );
  });

  it('names the cached mix’s rung: the cache itself, or sharing it through Redis', () => {
    const heldBy = (localRequestsPerSecond: number) =>
      rowOf(
        renderTargets(
          run([], {
            mix: [
              mixOf('gateway', 1100),
              mixOf('gateway-cached', 1200, { hitShare: 0.7, serverCpuMsPerRequest: 0.45, postgresCpuMsPerRequest: 0.05 }),
              mixOf('gateway-cached-local', localRequestsPerSecond, { hitShare: 0.72, serverCpuMsPerRequest: 0.3, postgresCpuMsPerRequest: 0.05 }),
              mixOf('postgraphile', 1000),
            ],
          }),
        ),
        'The mix, response cache on',
      );
    const below = heldBy(1600);
    expect(below.slice(1, 3)).toEqual(['1.20×, 70% hits', '**no**']);
    expect(below[3]).toBe(
      'the cache itself: in its own memory (one instance, nothing shared) 1.60×, 72% hits; the gateway’s process 0.30 / 0.50 ms CPU ' +
        'per request, PostgreSQL 0.05 / 0.20; with Redis the gateway’s process 0.45 / 0.50 ms CPU per request, PostgreSQL 0.05 / 0.20 ' +
        '(a hit reads the write log there)',
    );
    expect(heldBy(2100)[3]).toMatch(/^sharing through Redis: in its own memory \(one instance, nothing shared\) 2\.10×, 72% hits; /);
  });
});
