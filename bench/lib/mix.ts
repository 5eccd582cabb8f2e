import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { auth, gatewayNodeArgs, log, settings, sleep, warnings } from './config.js';
import { dataSet } from './data.js';
import { benchResponseCacheTtlMs } from './operations.js';
import { BackendCpu, cpuMs, type ServerProcess } from './processes.js';
import type { MixResult } from './report.js';
import { cacheLookups, sharedRedis, startGateway, startPostGraphile } from './servers.js';

/**
 * A realistic mix, where the other operations repeat one request: several
 * clients, each drawing from seeded distributions: pets by id (ids
 * Zipf-distributed over the read pets), pet pages filtered by category and
 * status and ordered by name, categories with their pets, inventory, orders
 * with a token (about a fifth of reads), and about 2% writes (updatePet,
 * updateInventory, placeOrder). Sent to the gateway uncached, the gateway
 * with its response cache, and PostGraphile, whose clients make the same
 * writes straight in SQL (it has no such mutations), at the same rate.
 *
 * A staleness checker reads every pet name in every answer. Renames are the
 * only writes to names and each one writes `mix <n>` with n rising; writes to
 * one pet are never concurrent, so once a rename is acknowledged, any answer
 * to a read sent after it must show that pet at n or later. An answer that
 * shows an older name is stale; a client's read of the pet it just renamed
 * (read-your-writes) is checked the same way.
 */

const ZIPF_EXPONENT = 1.1;
const SEED = 20261124;
const CLIENTS = 10;

/** mulberry32: a small seeded generator, so every run and every server gets the same sequence. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ranks 1..n with P(k) ∝ k^-s; rank k is pet id k (low ids are the popular ones). */
export function zipf(n: number, s: number): (random: () => number) => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 1; k <= n; k++) cdf[k - 1] = total += 1 / k ** s;
  return (random) => {
    const target = random() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (cdf[mid]! < target) low = mid + 1;
      else high = mid;
    }
    return low + 1;
  };
}

type Target = 'gateway' | 'postgraphile';
interface Request {
  kind: string;
  query: string;
  variables: Record<string, unknown>;
  token?: boolean;
}

const STATUSES = ['AVAILABLE', 'AVAILABLE', 'AVAILABLE', 'PENDING', 'SOLD'];

/** The ids the mix draws from: the bench's data set, or what another database holds (the soak's embedded one). */
export interface MixData {
  /** Pets read, renamed and restocked, the most popular first (Zipf ranks). */
  readPets: string[];
  /** Pets placeOrder takes from, with stock that does not run out during a run. */
  orderPets: string[];
  /** Categories, the most popular first. */
  categories: string[];
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
export const benchMixData: MixData = {
  readPets: ids(1, dataSet.readPets),
  orderPets: ids(dataSet.readPets + 1, dataSet.pets),
  categories: ids(1, dataSet.categories),
};

/** The reads, as each server names them; both answer with the same shapes the checker reads. */
function read(kind: string, target: Target, random: () => number, popularPet: (random: () => number) => string, data: MixData): Request {
  const gw = target === 'gateway';
  const pick = <T>(values: T[]) => values[Math.floor(random() * values.length)]!;
  switch (kind) {
    case 'pet':
      return gw
        ? {
            kind,
            query: 'query MixPet($id: ID!) { pet(id: $id) { pid: id pname: name status category { id name } inventory { quantity status } } }',
            variables: { id: popularPet(random) },
          }
        : {
            kind,
            query:
              'query MixPet($id: BigInt!) { petByRowId(rowId: $id) { pid: rowId pname: name status categoryByCategoryId { rowId name } inventoryItemByPetId { quantity status } } }',
            variables: { id: popularPet(random) },
          };
    case 'pets': {
      // Half the pages by category, half by category and status; the popular categories first.
      const category = data.categories[Math.floor(random() ** 2 * data.categories.length)]!;
      const status = random() < 0.5 ? pick(STATUSES) : undefined;
      return gw
        ? {
            kind,
            query:
              'query MixPets($filter: PetFilter) { pets(first: 20, filter: $filter, orderBy: { field: NAME }) { nodes { pid: id pname: name status } } }',
            variables: { filter: { categoryId: category, ...(status ? { status } : {}) } },
          }
        : {
            kind,
            // PostGraphile offers orders on indexed columns only, and pets.name has no index: by id.
            query:
              'query MixPets($condition: PetCondition) { allPets(first: 20, condition: $condition, orderBy: PRIMARY_KEY_ASC) { nodes { pid: rowId pname: name status } } }',
            variables: { condition: { categoryId: category, ...(status ? { status: status.toLowerCase() } : {}) } },
          };
    }
    case 'categories': {
      const first = pick([5, 10, 20]);
      return gw
        ? {
            kind,
            query:
              'query MixCategories($first: Int!) { categories(first: $first) { nodes { id name pets(first: 5) { nodes { pid: id pname: name } } } } }',
            variables: { first },
          }
        : {
            kind,
            query:
              'query MixCategories($first: Int!) { allCategories(first: $first, orderBy: PRIMARY_KEY_ASC) { nodes { rowId name petsByCategoryId(first: 5, orderBy: PRIMARY_KEY_ASC) { nodes { pid: rowId pname: name } } } } }',
            variables: { first },
          };
    }
    case 'inventory': {
      const status = pick(STATUSES);
      return gw
        ? {
            kind,
            query: 'query MixInventory($status: PetStatus!) { inventory(first: 20, filter: { status: $status }) { nodes { petId quantity status } } }',
            variables: { status },
          }
        : {
            kind,
            // PostGraphile names the enum's values as PostgreSQL spells them.
            query:
              'query MixInventory($status: PetStatus!) { allInventoryItems(first: 20, condition: { status: $status }, orderBy: PRIMARY_KEY_ASC) { nodes { petId quantity status } } }',
            variables: { status: status.toLowerCase() },
          };
    }
    default: {
      const petId = popularPet(random);
      return gw
        ? {
            kind: 'orders',
            query: 'query MixOrders($petId: ID!) { orders(first: 20, filter: { petId: $petId }) { nodes { id petId quantity complete } } }',
            variables: { petId },
            token: true,
          }
        : {
            kind: 'orders',
            query:
              'query MixOrders($petId: BigInt!) { allOrders(first: 20, condition: { petId: $petId }, orderBy: PRIMARY_KEY_ASC) { nodes { rowId petId quantity complete } } }',
            variables: { petId },
          };
    }
  }
}

/** What a draw is: reads by weight, and 2% writes. */
function drawKind(random: () => number): string {
  const x = random();
  if (x < 0.02) return x < 0.01 ? 'rename' : x < 0.015 ? 'stock' : 'order';
  const y = (x - 0.02) / 0.98;
  if (y < 0.4) return 'pet';
  if (y < 0.6) return 'pets';
  if (y < 0.72) return 'categories';
  if (y < 0.8) return 'inventory';
  return 'orders';
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });

export function post(url: string, body: string, token?: string, via: http.Agent = agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent: via,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.setTimeout(10_000, () => request.destroy(new Error('no answer in 10 s')));
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Every pet an answer shows, as [id, name]. Each document selects a pet's id and name as `pid` and
 * `pname`, one after the other, on both servers: a regular expression finds them without parsing
 * the answer, so the checker costs the load generator little (it shares the machine's CPUs).
 */
const PET_IN_ANSWER = /"pid":"?(\d+)"?,"pname":"((?:[^"\\]|\\.)*)"/g;
function petsIn(text: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const match of text.matchAll(PET_IN_ANSWER)) found.push([match[1]!, match[2]!]);
  return found;
}

/** Renames as acknowledged: per pet, each rename's number and when its answer arrived, in order. */
class Renames {
  private readonly acknowledged = new Map<string, Array<{ version: number; at: number }>>();
  private readonly writing = new Set<string>();
  private next = 1;

  /** A new name for `petId`, or undefined when a rename of it is still in flight (renames of one pet never overlap). */
  begin(petId: string): number | undefined {
    if (this.writing.has(petId)) return undefined;
    this.writing.add(petId);
    return this.next++;
  }

  end(petId: string, version: number | undefined, at: number) {
    this.writing.delete(petId);
    if (version === undefined) return;
    const list = this.acknowledged.get(petId) ?? [];
    list.push({ version, at });
    this.acknowledged.set(petId, list);
  }

  /** The newest version acknowledged before `sentAt`, 0 when none. */
  required(petId: string, sentAt: number): number {
    const list = this.acknowledged.get(petId);
    if (!list) return 0;
    for (let i = list.length - 1; i >= 0; i--) if (list[i]!.at < sentAt) return list[i]!.version;
    return 0;
  }
}

const reported = new Set<string>();

const versionOf = (name: string) => Number(/^mix (\d+)$/.exec(name)?.[1] ?? 0);

export interface CellOptions {
  target: Target;
  resultName: MixResult['server'];
  durationS: number;
  /** Where PostGraphile's clients write (they have no mutations). */
  sql?: pg.Pool;
  backend?: BackendCpu;
  data?: MixData;
  /** Requests a second over all clients; as fast as answered when absent. */
  ratePerSecond?: number;
  /** Each request's latency and whether it failed (an error, or a stale answer). */
  observe?: (latencyMs: number, failed: boolean) => void;
  /** Names the server in the warnings (`mix <name> <kind>: …`); resultName by default. */
  name?: string;
}

/**
 * The mix on one server for `durationS`, from CLIENTS clients; given several instances of it, the
 * clients take turns (client i sends to instance i mod n), and their CPU and lookups are summed.
 */
export async function runCell(server: ServerProcess | readonly ServerProcess[], options: CellOptions): Promise<MixResult> {
  const instances = Array.isArray(server) ? server : [server as ServerProcess];
  const { target, resultName, durationS, sql, backend, data = benchMixData, ratePerSecond, observe, name = resultName } = options;
  const renames = new Renames();
  const rank = zipf(data.readPets.length, ZIPF_EXPONENT);
  const popularPet = (random: () => number) => data.readPets[rank(random) - 1]!;
  const latencies: number[] = [];
  const byKind: Record<string, number> = {};
  let writes = 0;
  let errors = 0;
  let stale = 0;
  let checkedNames = 0;
  let ownWriteReads = 0;
  const cached = resultName.startsWith('gateway-cached');
  const lookupsBefore = cached ? await lookupsOf(instances) : undefined;
  const deadline = performance.now() + durationS * 1000;

  // The first error of each kind goes into the report's warnings: a wrong document shows at once.
  const failed = (kind: string, detail: string) => {
    errors++;
    if (reported.has(`${name} ${kind}`)) return;
    reported.add(`${name} ${kind}`);
    warnings.push(`mix ${name} ${kind}: ${detail.slice(0, 300)}`);
  };
  const check = (kind: string, status: number, text: string, sentAt: number) => {
    if (status !== 200 || !text.startsWith('{"data":') || text.includes('"errors":')) failed(kind, `${status} ${text}`);
    for (const [id, name] of petsIn(text)) {
      checkedNames++;
      if (versionOf(name) < renames.required(id, sentAt)) stale++;
    }
  };

  const gatewayWrite = async (url: string, kind: string, random: () => number): Promise<string | undefined> => {
    if (kind === 'rename') {
      const petId = popularPet(random);
      const version = renames.begin(petId);
      if (version === undefined) return undefined;
      let acknowledged: number | undefined;
      try {
        if (target === 'gateway') {
          const answer = await post(
            url,
            JSON.stringify({
              query: 'mutation MixRename($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id name } }',
              variables: { id: petId, name: `mix ${version}` },
            }),
            auth.token,
          );
          if (answer.status === 200 && !answer.text.includes('"errors"')) acknowledged = version;
          else failed(kind, `${answer.status} ${answer.text}`);
        } else {
          await sql!.query('UPDATE pets SET name = $1, updated_at = now() WHERE id = $2', [`mix ${version}`, petId]);
          acknowledged = version;
        }
      } finally {
        renames.end(petId, acknowledged, performance.now());
      }
      return acknowledged === undefined ? undefined : petId;
    }
    if (kind === 'stock') {
      const petId = popularPet(random);
      const quantity = 1 + Math.floor(random() * 100);
      if (target === 'gateway') {
        const answer = await post(
          url,
          JSON.stringify({
            query: 'mutation MixStock($petId: ID!, $quantity: Int!) { updateInventory(petId: $petId, input: { quantity: $quantity }) { petId quantity } }',
            variables: { petId, quantity },
          }),
          auth.token,
        );
        if (answer.status !== 200 || answer.text.includes('"errors"')) failed(kind, `${answer.status} ${answer.text}`);
      } else {
        await sql!.query('UPDATE inventory_items SET quantity = $1, updated_at = now() WHERE pet_id = $2', [quantity, petId]);
      }
      return undefined;
    }
    const petId = data.orderPets[Math.floor(random() * data.orderPets.length)]!;
    if (target === 'gateway') {
      const answer = await post(
        url,
        JSON.stringify({
          query: 'mutation MixOrder($input: PlaceOrderInput!) { placeOrder(input: $input) { id } }',
          variables: { input: { petId, quantity: 1 } },
        }),
        auth.token,
      );
      if (answer.status !== 200 || answer.text.includes('"errors"')) failed(kind, `${answer.status} ${answer.text}`);
    } else {
      await sql!.query('SELECT bench_place_order($1, 1)', [petId]);
    }
    return undefined;
  };

  // Paced: each client starts a request every CLIENTS / ratePerSecond seconds, without catching up on a backlog.
  const interval = ratePerSecond ? (1000 * CLIENTS) / ratePerSecond : 0;
  const client = async (index: number) => {
    const random = seeded(SEED + index);
    const url = `${instances[index % instances.length]!.url}/graphql`;
    let ownPet: string | undefined;
    let nextAt = performance.now() + (interval * index) / CLIENTS;
    while (performance.now() < deadline) {
      if (interval) {
        const now = performance.now();
        if (nextAt > now) await sleep(nextAt - now);
        if (performance.now() >= deadline) break;
        nextAt = Math.max(nextAt + interval, performance.now() - interval);
      }
      const kind = ownPet ? 'pet' : drawKind(random);
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      const sentAt = performance.now();
      const problems = errors + stale;
      try {
        if (kind === 'rename' || kind === 'stock' || kind === 'order') {
          writes++;
          ownPet = await gatewayWrite(url, kind, random);
          latencies.push(performance.now() - sentAt);
          observe?.(performance.now() - sentAt, errors + stale > problems);
          continue;
        }
        const request = read(kind, target, random, popularPet, data);
        if (ownPet) {
          // Read-your-writes: the pet this client just renamed, read at once.
          request.variables = { id: ownPet };
          ownWriteReads++;
          ownPet = undefined;
        }
        const answer = await post(url, JSON.stringify({ query: request.query, variables: request.variables }), request.token ? auth.token : undefined);
        latencies.push(performance.now() - sentAt);
        check(kind, answer.status, answer.text, sentAt);
        observe?.(performance.now() - sentAt, errors + stale > problems);
      } catch (error) {
        failed(kind, String(error));
        observe?.(performance.now() - sentAt, true);
        ownPet = undefined;
      }
    }
  };
  const startedAt = performance.now();
  const cpuBefore = cpuOf(instances);
  const selfBefore = process.cpuUsage();
  backend?.start();
  const sampler = setInterval(() => backend?.sample(), 1000);
  await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
  clearInterval(sampler);
  const postgresMs = backend?.available ? backend.elapsed() : null;
  const cpuAfter = cpuOf(instances);
  const self = process.cpuUsage(selfBefore);
  const elapsedS = (performance.now() - startedAt) / 1000;
  const lookupsAfter = lookupsBefore ? await lookupsOf(instances) : undefined;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10;
  const hits = lookupsBefore && lookupsAfter ? lookupsAfter.hits - lookupsBefore.hits : 0;
  const misses = lookupsBefore && lookupsAfter ? lookupsAfter.misses - lookupsBefore.misses : 0;
  return {
    server: resultName,
    requests: latencies.length,
    requestsPerSecond: latencies.length / elapsedS,
    latencyMs: { p50: at(0.5), p99: at(0.99) },
    writes,
    errors,
    stale,
    checkedNames,
    ownWriteReads,
    hitShare: lookupsBefore ? hits / Math.max(1, hits + misses) : null,
    serverCpuMsPerRequest: cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / Math.max(1, latencies.length) : null,
    postgresCpuMsPerRequest: postgresMs === null ? null : postgresMs / Math.max(1, latencies.length),
    loadGeneratorCpuPercent: (100 * (self.user + self.system)) / 1000 / (elapsedS * 1000 * os.availableParallelism()),
    byKind,
  };
}

/**
 * The mix on each server, started afresh on the bench database (the gateway uncached, with its
 * response cache on Redis, with it in its own memory, two instances sharing Redis, PostGraphile):
 * each warmed up, then measured for `settings.durationS` × 1.25 at 10 clients, in turn.
 */
export async function mixPass(databaseUrl: string, databaseName: string): Promise<MixResult[]> {
  log('mix pass: the gateway uncached, with its response cache (on Redis and in memory), two cached instances, and PostGraphile, on a realistic mix');
  // The cache as several instances run it: its write log in Redis, one round trip per query.
  const shared = await sharedRedis('mix', 'the cached gateway kept its write log in memory');
  const inMemorySettings = { RESPONSE_CACHE_TTL_MS: String(benchResponseCacheTtlMs) };
  const cachedSettings = { ...inMemorySettings, ...shared };
  type Cell = [ServerProcess | ServerProcess[], Target, MixResult['server']];
  const servers: Cell[] = [
    [await startGateway(databaseUrl, 'gateway-mix', gatewayNodeArgs), 'gateway', 'gateway'],
    [await startGateway(databaseUrl, 'gateway-cached-mix', gatewayNodeArgs, cachedSettings), 'gateway', 'gateway-cached'],
    ...(shared.REDIS_URL
      ? ([
          // The same cache as one instance alone runs it, everything in its own memory: what sharing through Redis costs.
          [await startGateway(databaseUrl, 'gateway-cached-local-mix', gatewayNodeArgs, inMemorySettings), 'gateway', 'gateway-cached-local'],
          // Two instances as a deployment runs them, sharing one Redis: an answer computed on one is a hit on the other.
          [
            [
              await startGateway(databaseUrl, 'gateway-cached-mix-a', gatewayNodeArgs, cachedSettings),
              await startGateway(databaseUrl, 'gateway-cached-mix-b', gatewayNodeArgs, cachedSettings),
            ],
            'gateway',
            'gateway-cached-pair',
          ],
        ] satisfies Cell[])
      : []),
    [await startPostGraphile(databaseUrl, 'postgraphile-mix'), 'postgraphile', 'postgraphile'],
  ];
  const sql = new pg.Pool({ connectionString: databaseUrl, max: CLIENTS });
  const backend = new BackendCpu(databaseName);
  const results: MixResult[] = [];
  try {
    for (const [server, target, name] of servers) {
      await runCell(server, { target, resultName: name, durationS: settings.warmupS, sql, backend });
      const result = await runCell(server, { target, resultName: name, durationS: settings.durationS * 1.25, sql, backend });
      results.push(result);
      log(
        `mix ${name.padEnd(19)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.latencyMs.p50} ms  p99 ${result.latencyMs.p99} ms  ` +
          `writes ${result.writes}  errors ${result.errors}  stale ${result.stale} of ${result.checkedNames} names  ` +
          `cpu ${result.serverCpuMsPerRequest?.toFixed(2)} ms/req  pg ${result.postgresCpuMsPerRequest?.toFixed(2)} ms/req  ` +
          `load generator ${result.loadGeneratorCpuPercent.toFixed(0)}%` +
          (result.hitShare === null ? '' : `  hits ${(result.hitShare * 100).toFixed(0)}%`),
      );
    }
  } finally {
    await sql.end();
    for (const [server] of servers) for (const instance of [server].flat()) await instance.stop();
  }
  return results;
}

/** CPU ms of every instance; undefined when one cannot be read. */
function cpuOf(instances: readonly ServerProcess[]): number | undefined {
  let total = 0;
  for (const instance of instances) {
    const ms = cpuMs(instance.pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

async function lookupsOf(instances: readonly ServerProcess[]) {
  const each = await Promise.all(instances.map((instance) => cacheLookups(instance)));
  return { hits: each.reduce((sum, one) => sum + one.hits, 0), misses: each.reduce((sum, one) => sum + one.misses, 0) };
}
