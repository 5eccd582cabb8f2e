import http from 'node:http';
import { auth, gatewayNodeArgs, log, settings, sleep, warnings } from './config.js';
import { benchMixData, post, seeded, zipf } from './mix.js';
import { cpuMs, memoryMb, type ServerProcess } from './processes.js';
import type { LiveResult } from './report.js';
import { sharedRedis, startGateway } from './servers.js';

/**
 * What live queries cost against polling: BENCH_LIVE_CLIENTS clients (1,000 by default), each
 * watching one answer (80% a pet by id, Zipf over the read pets; 20% a category's pets ordered by
 * name), under the realistic mix's writes (renames, stock counts, orders in its proportions) at
 * BENCH_LIVE_WRITES_PER_SECOND. First as live queries over SSE, then as the same queries polled
 * every second by the same clients, each on a gateway started afresh (with Redis when it answers,
 * as several instances run). Reported: answers received and how many of them were news, runs per
 * write, the gateway's CPU and resident memory.
 */

const clients = Number(process.env.BENCH_LIVE_CLIENTS ?? 1000);
const writesPerSecond = Number(process.env.BENCH_LIVE_WRITES_PER_SECOND ?? 10);
const POLL_INTERVAL_MS = 1_000;
const SEED = 20261126;

interface Watch {
  query: string;
  variables: Record<string, unknown>;
}

/** The answer each client watches, drawn once per client with a seeded generator. */
function watches(): Watch[] {
  const random = seeded(SEED);
  const rank = zipf(benchMixData.readPets.length, 1.1);
  return Array.from({ length: clients }, () =>
    random() < 0.8
      ? {
          query: 'query LivePet($id: ID!) @live { pet(id: $id) { pid: id pname: name status inventory { quantity } } }',
          variables: { id: benchMixData.readPets[rank(random) - 1]! },
        }
      : {
          query:
            'query LivePets($c: ID!) @live { pets(first: 20, filter: { categoryId: $c }, orderBy: { field: NAME }) { nodes { pid: id pname: name status } } }',
          variables: { c: benchMixData.categories[Math.floor(random() ** 2 * benchMixData.categories.length)]! },
        },
  );
}

/** Counts what one mode's clients received: every answer, and those that differed from the client's last one. */
class Tally {
  answers = 0;
  news = 0;
  errors = 0;
  private readonly last: string[] = [];
  constructor(private readonly mode: string) {}
  seen(client: number, data: string) {
    this.answers++;
    if (data.includes('"errors"')) {
      // The first one goes into the report's warnings.
      if (this.errors++ === 0) warnings.push(`live ${this.mode}: an answer with errors: ${data.slice(0, 300)}`);
    }
    if (this.last[client] !== undefined && this.last[client] !== data) this.news++;
    this.last[client] = data;
  }
}

/** One live query over SSE: resolves at its first answer, with the way to end it. */
function openLive(url: string, watch: Watch, client: number, tally: Tally, agent: http.Agent): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(watch);
    let answered = false;
    const request = http.request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) },
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) return reject(new Error(`live query answered ${response.statusCode}`));
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          if (!block.startsWith('event: next')) continue;
          tally.seen(client, block.slice(block.indexOf('data:') + 5).trim());
          if (!answered) {
            answered = true;
            resolve(() => request.destroy());
          }
        }
      });
      response.on('error', () => undefined);
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    request.setTimeout(30_000, () => {
      if (!answered) request.destroy(new Error('no first answer in 30 s'));
    });
    request.end(body);
  });
}

/** The mix's writes, paced, until `until`: half renames, a quarter stock counts, a quarter orders. */
async function write(url: string, until: number): Promise<number> {
  const random = seeded(SEED + 1);
  const rank = zipf(benchMixData.readPets.length, 1.1);
  let count = 0;
  let version = 0;
  for (let next = performance.now(); performance.now() < until; next += 1000 / writesPerSecond) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    const pet = benchMixData.readPets[rank(random) - 1]!;
    const x = random();
    const [query, variables] =
      x < 0.5
        ? ['mutation ($id: ID!, $n: String!) { updatePet(id: $id, input: { name: $n }) { id } }', { id: pet, n: `live ${++version}` }]
        : x < 0.75
          ? ['mutation ($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { quantity } }', { p: pet, q: 1 + Math.floor(random() * 100) }]
          : [
              'mutation ($p: ID!) { placeOrder(input: { petId: $p, quantity: 1 }) { id } }',
              { p: benchMixData.orderPets[Math.floor(random() * benchMixData.orderPets.length)]! },
            ];
    const answer = await post(url, JSON.stringify({ query, variables }), auth.token).catch((error: unknown) => ({ status: 0, text: String(error) }));
    if (answer.status !== 200 || answer.text.includes('"errors"')) {
      if (!warnings.some((warning) => warning.startsWith('live: a write failed'))) warnings.push(`live: a write failed: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    count++;
  }
  return count;
}

async function counter(server: ServerProcess, name: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

async function measure(mode: LiveResult['mode'], databaseUrl: string, shared: Record<string, string>): Promise<LiveResult> {
  const server = await startGateway(databaseUrl, `gateway-${mode}`, gatewayNodeArgs, {
    ...shared,
    LIVE_QUERY_MAX_PER_CLIENT: String(clients),
    LIVE_QUERY_MAX_PER_INSTANCE: String(clients),
  });
  const url = `${server.url}/graphql`;
  const tally = new Tally(mode);
  const agent = new http.Agent({ keepAlive: mode === 'polling', maxSockets: clients + 10 });
  const closers: Array<() => void> = [];
  const rssAtStart = memoryMb(server.pid)?.rss ?? null;
  try {
    const plan = watches();
    if (mode === 'live') {
      for (let i = 0; i < plan.length; i += 50) {
        closers.push(...(await Promise.all(plan.slice(i, i + 50).map((watch, j) => openLive(url, watch, i + j, tally, agent)))));
      }
    }
    const polledQuery = (watch: Watch) => JSON.stringify({ query: watch.query.replace(' @live', ''), variables: watch.variables });
    const before = {
      cpu: cpuMs(server.pid),
      answers: tally.answers,
      runs: await counter(server, 'petstore_live_query_reexecutions_total'),
      coalesced: await counter(server, 'petstore_live_query_coalesced_writes_total'),
    };
    const startedAt = performance.now();
    const until = startedAt + settings.durationS * 1000;
    const polling =
      mode === 'polling'
        ? plan.map(async (watch, client) => {
            await sleep((POLL_INTERVAL_MS * client) / plan.length);
            for (let next = performance.now(); performance.now() < until; next += POLL_INTERVAL_MS) {
              const answer = await post(url, polledQuery(watch), undefined, agent).catch((error: unknown) => ({ status: 0, text: String(error) }));
              tally.seen(client, answer.status === 200 ? answer.text : `{"errors":${answer.status}}`);
              const wait = next + POLL_INTERVAL_MS - performance.now();
              if (wait > 0) await sleep(wait);
            }
          })
        : [];
    const writes = await write(url, until);
    await Promise.all(polling);
    // Live answers a write brought may still be on their way: a moment for them, outside the CPU figure.
    const cpu = cpuMs(server.pid);
    const elapsedS = (performance.now() - startedAt) / 1000;
    if (mode === 'live') await sleep(1_000);
    const runs = await counter(server, 'petstore_live_query_reexecutions_total');
    const coalesced = await counter(server, 'petstore_live_query_coalesced_writes_total');
    const memory = memoryMb(server.pid);
    const answers = tally.answers - before.answers;
    return {
      mode,
      clients,
      durationS: Number(elapsedS.toFixed(1)),
      writes,
      answers,
      answersPerSecond: answers / elapsedS,
      news: tally.news,
      errors: tally.errors,
      runsPerWrite: mode === 'live' && runs !== null && before.runs !== null ? (runs - before.runs) / Math.max(1, writes) : null,
      coalescedWrites: mode === 'live' && coalesced !== null && before.coalesced !== null ? coalesced - before.coalesced : null,
      serverCpuPercent: cpu !== undefined && before.cpu !== undefined ? (100 * (cpu - before.cpu)) / (elapsedS * 1000) : null,
      rssMb: { atStart: rssAtStart, atEnd: memory?.rss ?? null, peak: memory?.peakRss ?? null },
    };
  } finally {
    for (const close of closers) close();
    agent.destroy();
    await server.stop();
  }
}

/** Live queries, then polling, each on a gateway of its own. */
export async function livePass(databaseUrl: string): Promise<LiveResult[]> {
  log(`live pass: ${clients} live queries over SSE, then the same clients polling every second, under ${writesPerSecond} writes/s`);
  const shared = await sharedRedis('live', 'writes were told in process');
  const results: LiveResult[] = [];
  for (const mode of ['live', 'polling'] as const) {
    const result = await measure(mode, databaseUrl, shared);
    results.push(result);
    log(
      `live ${mode.padEnd(7)} ${result.answersPerSecond.toFixed(1).padStart(7)} answers/s  news ${result.news}  writes ${result.writes}  ` +
        `runs/write ${result.runsPerWrite?.toFixed(1) ?? '–'}  coalesced ${result.coalescedWrites ?? '–'}  ` +
        `cpu ${result.serverCpuPercent?.toFixed(0)}%  rss ${result.rssMb.atEnd?.toFixed(0)} MB (peak ${result.rssMb.peak?.toFixed(0)})  errors ${result.errors}`,
    );
  }
  return results;
}
