import type {
  BaselineResult,
  BenchResults,
  CellResult,
  LadderResult,
  LadderRung,
  TenfoldResult,
} from './results.js';
import { renderTargets } from './targets.js';

export type * from './results.js';

const fmt = (value: number | null | undefined, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a && b ? `${(a / b).toFixed(2)}×` : '–';
const errorsOf = (cell: CellResult | undefined) =>
  cell ? cell.errors + cell.non2xx + cell.graphqlErrors : undefined;

export function renderMarkdown(results: BenchResults): string {
  const { machine, software, settings } = results;
  const cell = (variant: string | null, c: number) =>
    variant ? results.cells.find((x) => x.variant === variant && x.concurrency === c) : undefined;
  const available = (key: string | null) => (key ? (results.variants[key]?.available ?? false) : false);
  const lines: string[] = [];

  lines.push('# Benchmark: the gateway and PostGraphile 5, side by side');
  lines.push('');
  lines.push(
    `Run ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC (${fmt(results.wallClockS / 60, 1)} min) on ` +
      `${machine.nproc} × ${machine.cpuModel}, ${fmt(machine.memoryGb, 1)} GB RAM, Linux ${machine.kernel}; ` +
      `PostgreSQL ${software.postgres}. Gateway: Node ${software.gatewayNode}, \`node dist/src/main.js\` with the node flags of \`npm run start:prod\`, ` +
      `NODE_ENV=production, LOG_LEVEL=warn, pool ${software.poolSize}, ${software.gatewaySettings}. ` +
      `PostGraphile ${software.postgraphile}: ` +
      `Node ${software.postgraphileNode}, Amber preset, grafserv/node, no GraphiQL, no watch, no explain, ` +
      `pool ${software.poolSize}, no auth. Load: autocannon ${software.autocannon} on the same machine, ` +
      `${settings.durationS} s per cell after a ${settings.warmupS} s warm-up per variant. Commit ` +
      `${results.git.commit.slice(0, 10)}${results.git.dirty ? ' with uncommitted changes in src/ or prisma/ when built' : ''}.`,
  );
  lines.push('');
  lines.push(
    `Data: ${results.dataSet.categories} categories, ${fmt(results.dataSet.pets)} pets with inventory, ` +
      `${fmt(results.dataSet.orders)} orders. Ratios are gateway ÷ PostGraphile (above 1.00× the gateway is faster).`,
  );
  lines.push('');
  // Absent when BENCH_PASSES left out the counting, load and tenfold passes.
  if (results.operations.length || results.tenfold) lines.push(...renderTargets(results));
  if (results.operations.length) {
    lines.push('## Throughput and latency');
    lines.push('');
    lines.push(...renderThroughput(results.operations, results.variants, results.cells, settings.concurrency));
  }
  lines.push('');

  // REST against the same data in the gateway's own GraphQL.
  const restPairs: Array<[string, string, string]> = [
    ['3b', 'gateway:pet-rest', 'gateway:pet'],
    ['4a', 'gateway:orders-rest', 'gateway:orders'],
  ];
  const selectedIds = new Set(results.operations.map((operation) => operation.id));
  const restLines = restPairs
    .filter(([id]) => selectedIds.has(id))
    .flatMap(([id, rest, graphql]) =>
    settings.concurrency.map((c) => {
      const r = available(rest) ? cell(rest, c) : undefined;
      const g = cell(graphql, c);
      return `| ${id} | ${c} | ${r ? fmt(r.requestsPerSecond) : 'n/a'} | ${g ? fmt(g.requestsPerSecond) : '–'} | ${ratio(r?.requestsPerSecond, g?.requestsPerSecond)} |`;
    }),
  );
  if (restLines.length) {
    lines.push('REST against the same read in the gateway’s GraphQL (target: within 10%):');
    lines.push('');
    lines.push('| # | c | REST req/s | GraphQL req/s | REST ÷ GraphQL |');
    lines.push('|---|--:|--:|--:|--:|');
    lines.push(...restLines);
    lines.push('');
  }

  if (results.mix?.length) {
    const peer = results.mix.find((result) => result.server === 'postgraphile');
    lines.push('## A realistic mix');
    lines.push('');
    lines.push(
      '10 clients for ' + `${settings.durationS * 1.25} s each, drawing from seeded distributions: 40% pets by id (Zipf, s = 1.1, over the ` +
        '9,000 read pets), 20% pet pages by category (and half of them by status) ordered by name, 12% categories with ' +
        'their first pets, 8% inventory by status, 20% orders of a pet with a token; and 2% writes (renames, stock ' +
        'counts, placeOrder) through the gateway, or in SQL beside PostGraphile. Stale: answers showing a pet older than ' +
        'a rename acknowledged before they were sent (each client also reads every pet it renames at once).',
    );
    lines.push('');
    lines.push(
      '| Server | req/s | ÷ PostGraphile | p50 / p99 ms | cache hits | stale answers | names checked | own-write reads | writes | errors | CPU ms/req server / PostgreSQL | load generator CPU |',
    );
    lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const result of results.mix) {
      lines.push(
        `| ${result.server} | ${fmt(result.requestsPerSecond)} | ${ratio(result.requestsPerSecond, peer?.requestsPerSecond)} | ` +
          `${fmt(result.latencyMs.p50, 1)} / ${fmt(result.latencyMs.p99, 1)} | ${result.hitShare === null ? '–' : `${fmt(result.hitShare * 100)}%`} | ` +
          `${fmt(result.stale)} | ${fmt(result.checkedNames)} | ${fmt(result.ownWriteReads)} | ${fmt(result.writes)} | ${fmt(result.errors)} | ` +
          `${fmt(result.serverCpuMsPerRequest, 2)} / ${fmt(result.postgresCpuMsPerRequest, 2)} | ${fmt(result.loadGeneratorCpuPercent)}% |`,
      );
    }
    lines.push('');
    if (results.mix.some((result) => result.server === 'gateway-cached-local')) {
      lines.push(
        'gateway-cached-local is the same response cache without Redis, as one instance alone keeps it (its answers and ' +
          'write log in its own memory, its rate limits and budgets too): what the cache gives when nothing is shared.',
      );
      lines.push('');
    }
    const one = results.mix.find((result) => result.server === 'gateway-cached')?.hitShare;
    const pair = results.mix.find((result) => result.server === 'gateway-cached-pair')?.hitShare;
    if (one && pair !== undefined && pair !== null) {
      lines.push(
        `gateway-cached-pair is two cached instances sharing one Redis, five clients on each: their hit rate is ` +
          `${fmt(pair / one, 2)}× one instance's (${fmt(pair * 100)}% against ${fmt(one * 100)}%).`,
      );
      lines.push('');
    }
  }

  if (results.live?.length) {
    const first = results.live[0]!;
    lines.push('## Live queries against polling');
    lines.push('');
    lines.push(
      `${fmt(first.clients)} clients, each watching one answer (80% a pet by id, Zipf over the read pets; 20% a category's ` +
        'pets ordered by name), under the mix\'s writes (half renames, a quarter stock counts, a quarter orders): as live ' +
        'queries over SSE, then polling every second, each on a gateway of its own. Answers: received during the run ' +
        '(live: only those a write brought); news: answers that differed from the client\'s previous one.',
    );
    lines.push('');
    lines.push('| Mode | s | writes | answers/s | news | runs per write | coalesced writes | gateway CPU % of a core | RSS MB start / end / peak | errors |');
    lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const result of results.live) {
      lines.push(
        `| ${result.mode} | ${fmt(result.durationS, 1)} | ${fmt(result.writes)} | ${fmt(result.answersPerSecond, 1)} | ${fmt(result.news)} | ` +
          `${fmt(result.runsPerWrite, 2)} | ${fmt(result.coalescedWrites)} | ${fmt(result.serverCpuPercent)} | ` +
          `${fmt(result.rssMb.atStart)} / ${fmt(result.rssMb.atEnd)} / ${fmt(result.rssMb.peak)} | ${fmt(result.errors)} |`,
      );
    }
    lines.push('');
  }

  if (results.replicaRouting) {
    lines.push('## Reads on a streaming replica: what the routing costs');
    lines.push('');
    lines.push(
      'The gateway on a PostgreSQL primary of the bench’s own, alone and with a streaming replica of it ' +
        '(DATABASE_REPLICA_URLS), both servers on this machine: the figures show the routing’s overhead, not what ' +
        'a replica on its own machine would add. c=10; PostgreSQL CPU is both servers’ together.',
    );
    lines.push('');
    lines.push(
      '| Variant | primary alone req/s | with replica req/s | with ÷ alone | gateway CPU ms/req alone / with | PostgreSQL CPU ms/req alone / with | p99 ms alone / with | reads on the replica |',
    );
    lines.push('|---|--:|--:|--:|--:|--:|--:|--:|');
    for (const pair of results.replicaRouting.pairs) {
      const [a, b] = [pair.primaryOnly, pair.withReplica];
      lines.push(
        `| ${pair.label} | ${fmt(a.requestsPerSecond)} | ${fmt(b.requestsPerSecond)} | ${ratio(b.requestsPerSecond, a.requestsPerSecond)} | ` +
          `${fmt(a.serverCpuMsPerRequest, 2)} / ${fmt(b.serverCpuMsPerRequest, 2)} | ${fmt(a.postgresCpuMsPerRequest, 2)} / ${fmt(b.postgresCpuMsPerRequest, 2)} | ` +
          `${fmt(a.latencyMs.p99)} / ${fmt(b.latencyMs.p99)} | ${pair.replicaReadShare === null ? '–' : `${fmt(pair.replicaReadShare * 100)}%`} |`,
      );
    }
    lines.push('');
  }

  // Absent when the counting pass did not run (the ladder or baseline pass alone).
  if (Object.keys(results.variants).length) lines.push(...renderWorkPerRequest(results));

  // Absent when the load pass did not run.
  if (results.cells.length) {
    lines.push('## Memory');
    lines.push('');
    lines.push('| Server | RSS after start-up | Peak RSS (VmHWM, whole load pass) |');
    lines.push('|---|--:|--:|');
    lines.push(
      `| Gateway (Node ${software.gatewayNode}) | ${fmt(results.rssAtStartMb.gateway)} MB | ${fmt(results.peakRssMb.gateway)} MB |`,
    );
    if (results.peakRssMb.cachedGateway !== undefined) {
      lines.push(
        `| Gateway, response cache on (Node ${software.gatewayNode}) | ${fmt(results.rssAtStartMb.cachedGateway)} MB | ${fmt(results.peakRssMb.cachedGateway)} MB |`,
      );
    }
    if (results.peakRssMb.sharedCacheGateway !== undefined) {
      lines.push(
        `| Gateway, response cache on, Redis (Node ${software.gatewayNode}) | ${fmt(results.rssAtStartMb.sharedCacheGateway)} MB | ${fmt(results.peakRssMb.sharedCacheGateway)} MB |`,
      );
    }
    if (results.peakRssMb.federationGateway !== undefined) {
      lines.push(
        `| Gateway, FEDERATION=true (Node ${software.gatewayNode}) | ${fmt(results.rssAtStartMb.federationGateway)} MB | ${fmt(results.peakRssMb.federationGateway)} MB |`,
      );
    }
    lines.push(
      `| PostGraphile (Node ${software.postgraphileNode}) | ${fmt(results.rssAtStartMb.postgraphile)} MB | ${fmt(results.peakRssMb.postgraphile)} MB |`,
    );
    lines.push('');
  }

  if (results.ladder) lines.push(...renderLadder(results.ladder));
  if (results.tenfold) lines.push(...renderTenfold(results.tenfold));
  if (results.baseline) lines.push(...renderBaseline(results.baseline));

  lines.push('## Notes');
  lines.push('');
  lines.push(`- SQL counting: ${results.counting.method} pg_stat_statements: ${results.counting.pgStatStatements}.`);
  for (const operation of results.operations) {
    if (operation.note) lines.push(`- ${operation.id}: ${operation.note}.`);
  }
  const cached = results.cells.filter((c) => c.responseCache);
  if (cached.length) {
    const shares = cached.map((c) => {
      const { hits, misses } = c.responseCache ?? { hits: 0, misses: 0 };
      return `${c.variant} c=${c.concurrency} ${fmt((100 * hits) / Math.max(1, hits + misses), 1)}%`;
    });
    lines.push(`- Response cache hits, as a share of its lookups in each cell: ${shares.join(', ')}.`);
  }
  for (const variant of Object.values(results.variants)) {
    if (!variant.available) lines.push(`- n/a: ${variant.label} (${variant.target}): ${variant.reason}.`);
  }
  for (const operation of results.operations) {
    if (operation.sameData === false) {
      lines.push(`- ${operation.id}: the two servers did NOT answer with the same data: ${operation.sameDataDetail}`);
    }
  }
  const compared = results.operations.filter((operation) => operation.sameData === true).map((o) => o.id);
  if (compared.length) lines.push(`- Same data checked (one request each, same arguments): ${compared.join(', ')}.`);
  lines.push(
    '- Errors = connection errors + non-2xx answers + 2xx answers carrying GraphQL `errors`; latency percentiles are of the 2xx answers.',
  );
  const others = results.cells.map((c) => c.otherProcessesCpuPercent).sort((a, b) => a - b);
  if (others.length) {
    const median = others[Math.floor(others.length / 2)] ?? 0;
    const max = others[others.length - 1] ?? 0;
    lines.push(
      `- The machine was shared: load average ${machine.loadAverageAtStart.join(' ')} at the start, ` +
        `${machine.loadAverageAtEnd.join(' ')} at the end; during the cells, other processes took a median ` +
        `${fmt(median)}% (max ${fmt(max)}%) of all CPUs, and autocannon itself a median ` +
        `${fmt(results.cells.map((c) => c.loadGeneratorCpuPercent).sort((a, b) => a - b)[Math.floor(others.length / 2)])}%. ` +
        'Gateway and PostGraphile cells alternate, so both meet the same background.',
    );
  }
  for (const warning of results.warnings) lines.push(`- Warning: ${warning}`);
  lines.push('');

  // Absent when the counting pass did not run.
  if (!Object.values(results.variants).some((variant) => variant.statements?.length)) return lines.join('\n');
  lines.push('<details><summary>The SQL of one request, per variant (from the counting pass)</summary>');
  lines.push('');
  for (const variant of Object.values(results.variants)) {
    if (!variant.statements?.length) continue;
    lines.push(`**${variant.target}: ${variant.label}**`);
    lines.push('');
    lines.push('```sql');
    for (const statement of variant.statements) {
      const sql = statement.sql.replace(/\s+/g, ' ').trim();
      lines.push(`-- ${statement.tag}, ${statement.rows} rows`);
      lines.push(sql.length > 600 ? `${sql.slice(0, 600)} …` : sql);
    }
    lines.push('```');
    lines.push('');
  }
  lines.push('</details>');
  lines.push('');
  return lines.join('\n');
}

/** Each operation's cells, gateway and PostGraphile side by side, at each level. */
function renderThroughput(
  operations: BenchResults['operations'],
  variants: BenchResults['variants'],
  cells: CellResult[],
  levels: number[],
): string[] {
  const cell = (variant: string | null, c: number) => (variant ? cells.find((x) => x.variant === variant && x.concurrency === c) : undefined);
  const available = (key: string | null) => (key ? (variants[key]?.available ?? false) : false);
  const na = (key: string | null) => (key === null ? 'n/a' : available(key) ? '–' : 'n/a');
  const lines = [
    '| # | Operation | c | Gateway req/s | PostGraphile req/s | Gateway ÷ PG | Gateway p50 / p99 ms | PostGraphile p50 / p99 ms | Errors gw / pg |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const operation of operations) {
    for (const c of levels) {
      const gw = available(operation.gateway) ? cell(operation.gateway, c) : undefined;
      const pg = available(operation.postgraphile) ? cell(operation.postgraphile, c) : undefined;
      lines.push(
        [
          '',
          operation.id,
          operation.title,
          c,
          gw ? fmt(gw.requestsPerSecond) : na(operation.gateway),
          pg ? fmt(pg.requestsPerSecond) : na(operation.postgraphile),
          ratio(gw?.requestsPerSecond, pg?.requestsPerSecond),
          gw ? `${fmt(gw.latencyMs.p50)} / ${fmt(gw.latencyMs.p99)}` : na(operation.gateway),
          pg ? `${fmt(pg.latencyMs.p50)} / ${fmt(pg.latencyMs.p99)}` : na(operation.postgraphile),
          `${fmt(errorsOf(gw))} / ${fmt(errorsOf(pg))}`,
          '',
        ]
          .join(' | ')
          .trim(),
      );
    }
  }
  return lines;
}

/** The tenfold pass: the reads again on ten times the data, with the CPU each request cost. */
function renderTenfold(tenfold: TenfoldResult): string[] {
  const { dataSet } = tenfold;
  const lines = ['## Ten times the data', ''];
  lines.push(
    `The reads again on ${fmt(dataSet.pets)} pets and ${fmt(dataSet.orders)} orders (${fmt(dataSet.categories)} categories), ` +
      `in a run of their own (${fmt(tenfold.wallClockS / 60, 1)} min) with a database and servers of its own, the same build and settings; ` +
      `answers checked alike on both sides first, as above. Peak RSS: gateway ${fmt(tenfold.peakRssMb.gateway)} MB, PostGraphile ${fmt(tenfold.peakRssMb.postgraphile)} MB.`,
  );
  lines.push('');
  lines.push(...renderThroughput(tenfold.operations, tenfold.variants, tenfold.cells, tenfold.concurrency));
  lines.push('');
  lines.push('CPU ms per request (server / PostgreSQL), gateway against PostGraphile:');
  lines.push('');
  lines.push('| # | c | Gateway | PostGraphile |');
  lines.push('|---|--:|--:|--:|');
  const cpu = (variant: string | null, c: number) => {
    const found = variant ? tenfold.cells.find((x) => x.variant === variant && x.concurrency === c) : undefined;
    return found ? `${fmt(found.serverCpuMsPerRequest, 2)} / ${fmt(found.postgresCpuMsPerRequest, 2)}` : '–';
  };
  for (const operation of tenfold.operations) {
    for (const c of tenfold.concurrency) lines.push(`| ${operation.id} | ${c} | ${cpu(operation.gateway, c)} | ${cpu(operation.postgraphile, c)} |`);
  }
  lines.push('');
  return lines;
}

/** SQL statements and rows per request from the counting pass, and CPU per request from the load pass. */
function renderWorkPerRequest(results: BenchResults): string[] {
  const { settings } = results;
  const cell = (variant: string, c: number) => results.cells.find((x) => x.variant === variant && x.concurrency === c);
  const lines: string[] = [];
  lines.push('## Work per request');
  lines.push('');
  const mid = settings.concurrency.includes(10) ? 10 : (settings.concurrency[0] ?? 1);
  lines.push(
    `SQL statements and rows: counted on the wire in a separate pass (${settings.countRequests} sequential ` +
      'requests after 3 warm-up ones; see Notes). CPU: from /proc during the load cell at ' +
      `c=${mid}, divided by the requests served.`,
  );
  lines.push('');
  lines.push(
    '| Variant | SQL statements / req (without BEGIN/COMMIT) | rows from PostgreSQL / req | server CPU ms / req | PostgreSQL CPU ms / req |',
  );
  lines.push('|---|--:|--:|--:|--:|');
  for (const variant of Object.values(results.variants)) {
    const c = cell(variant.key, mid);
    const per = variant.perRequest;
    lines.push(
      `| ${variant.target === 'gateway' ? 'Gateway' : 'PostGraphile'}: ${variant.label} | ` +
        (variant.available && per
          ? `${fmt(per.statements, 1)} (${fmt(per.dataStatements, 1)}) | ${fmt(per.rows, 1)} | ` +
            `${fmt(c?.serverCpuMsPerRequest, 2)} | ${fmt(c?.postgresCpuMsPerRequest, 2)} |`
          : `n/a | n/a | n/a | n/a |`),
    );
  }
  lines.push('');
  return lines;
}

/**
 * The ladder: req/s of every rung per operation and concurrency, then where the time goes (server
 * and PostgreSQL CPU ms per request), the gateway against PostGraphile and against the project's own
 * code without GraphQL (the best Prisma rung for a read, the domain function for a write), and the
 * share of the request the GraphQL layer costs: what the gateway's process spends beyond that code's,
 * over the whole request (the gateway's process and PostgreSQL's).
 */
export function renderLadder(ladder: LadderResult): string[] {
  const lines: string[] = [];
  const levels = [...new Set(ladder.cells.map((c) => c.concurrency))];
  const at = (id: string, rung: LadderRung, c: number) => ladder.cells.find((x) => x.operation === id && x.rung === rung && x.concurrency === c);
  /** The cells of the project's own code answering without GraphQL: the Prisma rungs for a read, the domain function for a write. */
  const withoutGraphQL = (operation: LadderResult['operations'][number], c: number) =>
    (operation.write ? (['domain'] as const) : (['prisma-join', 'prisma-query'] as const))
      .map((rung) => at(operation.id, rung, c))
      .filter((cell) => cell !== undefined);
  const below = (operation: LadderResult['operations'][number], c: number) =>
    withoutGraphQL(operation, c).sort((a, b) => b.requestsPerSecond - a.requestsPerSecond)[0];
  lines.push('## The ladder: the same reads and writes by less and less machinery');
  lines.push('');
  for (const { label, what, answers } of ladder.rungs) lines.push(`- **${label}**${answers === 'both' ? '' : ` (${answers})`}: ${what}.`);
  lines.push('');
  lines.push(`| # | operation | c | ${ladder.rungs.map((r) => r.label).join(' | ')} | gateway ÷ PostGraphile | gateway ÷ without GraphQL |`);
  lines.push(`|---|---|--:|${ladder.rungs.map(() => '--:|').join('')}--:|--:|`);
  for (const operation of ladder.operations) {
    for (const c of levels) {
      const rate = (rung: LadderRung) => at(operation.id, rung, c)?.requestsPerSecond;
      lines.push(
        `| ${operation.id} | ${operation.title} | ${c} | ${ladder.rungs.map(({ rung }) => fmt(rate(rung))).join(' | ')} | ` +
          `${ratio(rate('gateway'), rate('postgraphile'))} | ${ratio(rate('gateway'), below(operation, c)?.requestsPerSecond)} |`,
      );
    }
  }
  lines.push('');
  lines.push('Where the time goes: CPU ms per request of the server process / of PostgreSQL, and p99 latency.');
  lines.push('');
  lines.push(`| # | c | ${ladder.rungs.map((r) => r.label).join(' | ')} | GraphQL layer's share |`);
  lines.push(`|---|--:|${ladder.rungs.map(() => '--:|').join('')}--:|`);
  for (const operation of ladder.operations) {
    for (const c of levels) {
      const shown = ladder.rungs.map(({ rung }) => {
        const x = at(operation.id, rung, c);
        return x ? `${fmt(x.serverCpuMsPerRequest, 2)} / ${fmt(x.postgresCpuMsPerRequest, 2)}, p99 ${fmt(x.latencyMs.p99)} ms` : '–';
      });
      const gateway = at(operation.id, 'gateway', c);
      const baseCpu = Math.min(...withoutGraphQL(operation, c).map((cell) => cell.serverCpuMsPerRequest ?? Number.POSITIVE_INFINITY));
      const share =
        gateway?.serverCpuMsPerRequest != null && gateway.postgresCpuMsPerRequest != null && Number.isFinite(baseCpu)
          ? `${fmt((100 * Math.max(0, gateway.serverCpuMsPerRequest - baseCpu)) / (gateway.serverCpuMsPerRequest + gateway.postgresCpuMsPerRequest))}%`
          : '–';
      lines.push(`| ${operation.id} | ${c} | ${shown.join(' | ')} | ${share} |`);
    }
  }
  lines.push('');
  const differing = ladder.operations.filter((operation) => operation.differs.length);
  lines.push(
    differing.length
      ? `Answers NOT the same: ${differing.map((operation) => `${operation.id} at ${operation.differs.join(', ')}`).join('; ')}.`
      : `Every rung answered each operation with the gateway's data (checked once per operation, same arguments; PostGraphile through the bench's normalisation).`,
  );
  lines.push(
    `Peak RSS: ${ladder.rungs
      .filter(({ rung }) => ladder.peakRssMb[rung] !== undefined)
      .map(({ rung, label }) => `${label} ${fmt(ladder.peakRssMb[rung])} MB`)
      .join(', ')}.`,
  );
  lines.push('');
  return lines;
}

/**
 * The baseline pass: per operation and concurrency, each side's req/s, latency, CPU and SQL per
 * request, and current ÷ baseline over all the rounds, start by start and round by round (how far they
 * agree is what the processes' and the host's noise was); then whether both answered alike, and each
 * gateway's memory.
 */
export function renderBaseline(result: BaselineResult): string[] {
  const lines: string[] = [];
  const { baseline, current } = result;
  const settingsOf = (settings: Record<string, string>) =>
    Object.keys(settings).length ? Object.entries(settings).map(([name, value]) => `\`${name}=${value}\``).join(' ') : 'none of its own';
  const both = (a: number | null | undefined, b: number | null | undefined, digits: number) => `${fmt(a, digits)} / ${fmt(b, digits)}`;
  // autocannon's percentiles are whole milliseconds; a median of two rounds may fall between them.
  const ms = (a: number, b: number) => [a, b].map((x) => x.toLocaleString('en-US', { maximumFractionDigits: 1 })).join(' / ');
  lines.push(`## The work tree against a baseline build (${baseline.ref} = ${baseline.commit.slice(0, 10)})`);
  lines.push('');
  lines.push(
    `Baseline: commit ${baseline.commit.slice(0, 10)} (\`BENCH_BASELINE=${baseline.ref}\`), built in \`${baseline.dir}\` ` +
      `(${baseline.reused ? 'reused from an earlier run' : `built by this run in ${fmt(baseline.buildSeconds)} s`}` +
      `${baseline.build.ok ? '' : `, with ${baseline.build.typeErrors.length} type errors`}), Node ${baseline.node}, settings: ${settingsOf(baseline.settings)}. ` +
      `Current: the work tree at ${current.commit.slice(0, 10)}${current.dirty ? ' with uncommitted changes in src/ or prisma/' : ''}, ` +
      `Node ${current.node}, settings: ${settingsOf(current.settings)}. Both run as in production with the bench's settings, on the same ` +
      `database, one driven while the other idles. Each cell: a ${fmt(result.warmupS)} s warm-up of each per operation, then ` +
      `${result.rounds} rounds of ${fmt(result.durationS)} s on each, the side that goes first alternating from round to round ` +
      '(baseline first in the odd rounds), so that drift on the host meets both alike' +
      `${result.starts > 1 ? `; both sides' gateways started afresh ${result.starts} times, each start running every round (by start: the ratio over each start's rounds)` : ''}. ` +
      'Ratios are current ÷ baseline: above ' +
      '1.00× for throughput, or below it for CPU, the current build is faster. Latency: the median over the rounds of each round\'s percentile.',
  );
  lines.push('');
  lines.push(
    '| # | Operation | c | baseline req/s | current req/s | current ÷ baseline | by start | round by round | p50 / p99 ms baseline | p50 / p99 ms current | ' +
      'gateway CPU ms/req baseline / current | CPU current ÷ baseline | PostgreSQL CPU ms/req baseline / current | SQL statements/req baseline / current | errors baseline / current |',
  );
  lines.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const cell of result.cells) {
    const variant = result.variants.find((v) => v.variant === cell.variant);
    const [b, c] = [cell.baseline, cell.current];
    lines.push(
      `| ${cell.operation} | ${variant?.title ?? cell.variant} | ${cell.concurrency} | ${fmt(b.requestsPerSecond)} | ${fmt(c.requestsPerSecond)} | ` +
        `${ratio(c.requestsPerSecond, b.requestsPerSecond)} | ${cell.startRatios.map((r) => r.toFixed(2)).join(', ') || '–'} | ` +
        `${cell.roundRatios.map((r) => r.toFixed(2)).join(', ')} | ` +
        `${ms(b.latencyMs.p50, b.latencyMs.p99)} | ${ms(c.latencyMs.p50, c.latencyMs.p99)} | ` +
        `${both(b.serverCpuMsPerRequest, c.serverCpuMsPerRequest, 2)} | ${ratio(c.serverCpuMsPerRequest, b.serverCpuMsPerRequest)} | ` +
        `${both(b.postgresCpuMsPerRequest, c.postgresCpuMsPerRequest, 2)} | ` +
        `${both(variant?.perRequest.baseline?.statements, variant?.perRequest.current?.statements, 1)} | ${both(b.errors, c.errors, 0)} |`,
    );
  }
  lines.push('');
  const same = result.variants.filter((v) => v.sameAnswer === true).map((v) => v.operation);
  const differ = result.variants.filter((v) => v.sameAnswer === false);
  const unchecked = result.variants.filter((v) => v.sameAnswer === null);
  if (same.length) lines.push(`Same answer from both (status, no errors or the same refusal, the same \`data\`; one request each, the same arguments): ${same.join(', ')}.`);
  for (const v of differ) lines.push(`**Answers NOT the same** for ${v.operation}: ${v.detail}.`);
  for (const v of unchecked) lines.push(`${v.operation}: ${v.detail}.`);
  lines.push(
    `SQL statements per request (BEGIN/COMMIT included): counted on the wire, ${result.variants[0]?.perRequest.current?.requests ?? '–'} ` +
      'sequential requests on gateways of their own, before the load.',
  );
  const others = result.cells.flatMap((cell) => cell.rounds.flatMap((round) => [round.baseline, round.current])).map((x) => x.otherProcessesCpuPercent);
  if (others.length) {
    const sorted = [...others].sort((a, b) => a - b);
    lines.push(
      `Other processes on the host took a median ${fmt(sorted[Math.floor(sorted.length / 2)])}% (max ${fmt(sorted[sorted.length - 1])}%) of all CPUs during these cells.`,
    );
  }
  lines.push('');
  const byStart = result.starts > 1;
  lines.push(`| Gateway process | side${byStart ? ' | start' : ''} | RSS after start-up | Peak RSS (VmHWM, the process's whole run) |`);
  lines.push(`|---|---${byStart ? '|--:' : ''}|--:|--:|`);
  for (const memory of result.memoryMb) {
    lines.push(`| ${memory.server} | ${memory.side}${byStart ? ` | ${memory.start + 1}` : ''} | ${fmt(memory.rssAtStart)} MB | ${fmt(memory.peakRss)} MB |`);
  }
  lines.push('');
  return lines;
}
