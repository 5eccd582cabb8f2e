/** What a run of the bench measured: the shapes of its results, written to its .json and read by its reports. */
import type { StatementRecord, WireCounts } from './pg-wire-counter.js';

export interface VariantResult {
  key: string;
  target: 'gateway' | 'postgraphile';
  label: string;
  kind: 'graphql' | 'rest';
  available: boolean;
  /** Why the variant was not measured. */
  reason?: string;
  /** HTTP status and size of the checked answer. */
  sample?: { status: number; bytes: number; graphqlErrors?: unknown };
  /** Per request, from the counting pass (sequential requests through the wire counter). */
  perRequest?: WireCounts & { requests: number };
  /** Every statement of one request, in order. */
  statements?: StatementRecord[];
}

export interface CellResult {
  variant: string;
  target: 'gateway' | 'postgraphile';
  concurrency: number;
  durationS: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  /** 2xx answers whose body held GraphQL errors. */
  graphqlErrors: number;
  statusCodes: Record<string, number>;
  serverCpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
  /** Whole machine, all CPUs. */
  machineCpuBusyPercent: number;
  /** The benchmark process itself (autocannon), as a share of all CPUs. */
  loadGeneratorCpuPercent: number;
  /** Everything else on the machine (neither server, its PostgreSQL backends, nor autocannon), share of all CPUs. */
  otherProcessesCpuPercent: number;
  /** Lookups in the gateway's response cache during the cell (variants sent to the cached gateway). */
  responseCache?: { hits: number; misses: number };
  serverRssMb: number | null;
  serverPeakRssMbSoFar: number | null;
}

export interface OperationResult {
  id: string;
  title: string;
  gateway: string;
  postgraphile: string | null;
  note?: string;
  /** Did both answer with the same data (checked once, same arguments)? null: not compared. */
  sameData: boolean | null;
  sameDataDetail?: string;
}

export type LadderRung =
  | 'postgraphile'
  | 'sql'
  | 'prisma-join'
  | 'prisma-query'
  | 'domain'
  | 'bare-yoga'
  | 'field-by-field'
  | 'prisma-plans'
  | 'gateway';

/** The ladder pass (bench/lib/ladder.ts): the same reads and writes answered by less and less machinery. */
export interface LadderResult {
  /** Each rung, and which operations it answers. */
  rungs: Array<{ rung: LadderRung; label: string; what: string; answers: 'reads' | 'writes' | 'both' }>;
  /** Each operation, and the rungs whose answer differed from the gateway's (none: all the same). */
  operations: Array<{ id: string; title: string; write: boolean; differs: string[] }>;
  cells: Array<CellResult & { operation: string; rung: LadderRung }>;
  peakRssMb: Partial<Record<LadderRung, number | null>>;
}

/** Live queries, or the same clients polling every second, under writes (bench/lib/live.ts). */
export interface LiveResult {
  mode: 'live' | 'polling';
  clients: number;
  durationS: number;
  writes: number;
  /** Answers the clients received during the run (live: pushes after the first answers; polling: every poll's). */
  answers: number;
  answersPerSecond: number;
  /** Answers that differed from the client's previous one: news. */
  news: number;
  errors: number;
  /** Live queries run again per write (live only). */
  runsPerWrite: number | null;
  coalescedWrites: number | null;
  /** The gateway's CPU over the run, in % of one core. */
  serverCpuPercent: number | null;
  rssMb: { atStart: number | null; atEnd: number | null; peak: number | null };
}

/** The realistic mix on one server (bench/lib/mix.ts). */
export interface MixResult {
  /**
   * gateway-cached: its response cache with Redis, as instances share it; gateway-cached-local: the same
   * cache without Redis, one instance alone; gateway-cached-pair: two cached instances sharing one Redis,
   * half the clients on each.
   */
  server: 'gateway' | 'gateway-cached' | 'gateway-cached-local' | 'gateway-cached-pair' | 'postgraphile';
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p99: number };
  writes: number;
  errors: number;
  /** Answers that showed a pet older than a rename acknowledged before they were sent. */
  stale: number;
  /** Pet names checked against acknowledged renames, and reads right after a client's own rename. */
  checkedNames: number;
  ownWriteReads: number;
  /** The response cache's hits (another instance's answers included) ÷ lookups over the cell (cached gateways only). */
  hitShare: number | null;
  /** CPU per request of the server and of PostgreSQL; the load generator's share of all CPUs. */
  serverCpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
  loadGeneratorCpuPercent: number;
  byKind: Record<string, number>;
}

/** The gateway on a primary alone and with a streaming replica (bench/lib/replicas.ts). */
export interface ReplicaRoutingResult {
  /** Per variant: the cell on the primary alone and the cell with the replica. */
  pairs: Array<{ variant: string; label: string; primaryOnly: CellResult; withReplica: CellResult; replicaReadShare: number | null }>;
}

/** The two sides of the baseline pass (bench/lib/baseline.ts). */
export type BaselineSideName = 'baseline' | 'current';

/** One side of a baseline-pass cell, over all its rounds. */
export interface BaselineSide {
  requests: number;
  /** Requests ÷ seconds over all the rounds. */
  requestsPerSecond: number;
  /** The median over the rounds of each round's percentile. */
  latencyMs: { p50: number; p99: number };
  /** Over all the rounds: CPU ms of the gateway's process, and of PostgreSQL, ÷ requests. */
  serverCpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
  /** Connection errors + non-2xx answers + 2xx answers carrying GraphQL errors. */
  errors: number;
}

/** The work tree's build against an earlier commit's, one operation at one concurrency. */
export interface BaselineCell {
  operation: string;
  variant: string;
  concurrency: number;
  baseline: BaselineSide;
  current: BaselineSide;
  /** Current ÷ baseline req/s over all the rounds: above 1, the current build is faster. */
  throughputRatio: number | null;
  /** The same ratio round by round, to show how far the rounds agree. */
  roundRatios: number[];
  /** The same ratio over each start's rounds (BENCH_BASELINE_STARTS), to show how far the processes agree. */
  startRatios: number[];
  /** Every round's two cells; `first` is the side driven first in that round, `start` the start it ran in (from 0). */
  rounds: Array<{ first: BaselineSideName; start: number } & Record<BaselineSideName, CellResult>>;
}

/** The baseline pass: the gateway as built from the work tree, side by side with an earlier commit's. */
export interface BaselineResult {
  baseline: {
    ref: string;
    commit: string;
    dir: string;
    node: string;
    settings: Record<string, string>;
    reused: boolean;
    buildSeconds: number;
    build: { ok: boolean; typeErrors: string[] };
  };
  current: { commit: string; dirty: boolean; node: string; settings: Record<string, string> };
  rounds: number;
  /** Times both sides' gateways were started, each running every round of every cell. */
  starts: number;
  durationS: number;
  warmupS: number;
  concurrency: number[];
  /** Per operation: both answers to one request checked, and SQL statements counted on the wire. */
  variants: Array<{
    operation: string;
    title: string;
    variant: string;
    /** Same status, no errors, same data; null: a write, its data not compared. */
    sameAnswer: boolean | null;
    detail?: string;
    perRequest: Record<BaselineSideName, WireCounts & { requests: number }>;
  }>;
  cells: BaselineCell[];
  /** Each gateway process of the pass, of every start (from 0): RSS a second after start-up, and its peak (VmHWM) at the end. */
  memoryMb: Array<{ server: string; side: BaselineSideName; start: number; rssAtStart: number | null; peakRss: number | null }>;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  wallClockS: number;
  settings: { durationS: number; warmupS: number; concurrency: number[]; countRequests: number };
  machine: {
    nproc: number;
    cpuModel: string;
    memoryGb: number;
    kernel: string;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
  };
  software: Record<string, string>;
  git: { commit: string; dirty: boolean };
  build: { ok: boolean; typeErrors: string[] };
  counting: { method: string; pgStatStatements: string };
  dataSet: Record<string, number>;
  operations: OperationResult[];
  variants: Record<string, VariantResult>;
  cells: CellResult[];
  peakRssMb: ServerMemory;
  /** Resident set a second after start-up, before any load. */
  rssAtStartMb: ServerMemory;
  /** The gateway on a primary alone and with a streaming replica (bench/lib/replicas.ts). */
  replicaRouting?: ReplicaRoutingResult;
  /** The realistic mix (bench/lib/mix.ts), one result per server. */
  mix?: MixResult[];
  /** The ladder pass (bench/lib/ladder.ts). */
  ladder?: LadderResult;
  /** Live queries against polling (bench/lib/live.ts). */
  live?: LiveResult[];
  /** The work tree's gateway against an earlier commit's (bench/lib/baseline.ts). */
  baseline?: BaselineResult;
  /** The reads on ten times the data, in a run of their own (bench/lib/tenfold.ts). */
  tenfold?: TenfoldResult;
  /** On ten times the data: the deep page against the first, side by side (bench/lib/matrix.ts pagesSideBySide). */
  pageRounds?: PageRounds[];
  warnings: string[];
}

/** The counting and load passes of the reads, on ten times the data (bench/lib/tenfold.ts). */
export interface TenfoldResult {
  dataSet: Record<string, number>;
  wallClockS: number;
  concurrency: number[];
  operations: OperationResult[];
  variants: Record<string, VariantResult>;
  cells: CellResult[];
  peakRssMb: ServerMemory;
  pageRounds?: PageRounds[];
}

/** The first page and a deep one (4b, 4d) on the gateway at one level, in rounds that drive one and then the other. */
export interface PageRounds {
  concurrency: number;
  rounds: Array<{ first: CellResult; deep: CellResult; deepWentFirst: boolean }>;
}

export interface ServerMemory {
  gateway: number | null;
  /** The gateway started with its response cache on (absent in results from before it). */
  cachedGateway?: number | null;
  /** The gateway with its response cache on and Redis (absent unless row 1r ran). */
  sharedCacheGateway?: number | null;
  /** The gateway started as a Federation subgraph (absent unless its row ran). */
  federationGateway?: number | null;
  postgraphile: number | null;
}
