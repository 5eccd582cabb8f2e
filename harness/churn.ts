/**
 * Document churn: GraphQL documents that differ in their text each time (aliases, page sizes and
 * selections vary), as a public gateway meets them from clients that inline literals, tools and
 * scanners. Each is sent a few times, a few at a time. Deterministic: document n is always the same text.
 */

const petFields = ['id', 'name', 'status', 'category { id name }', 'inventory { quantity status }'];
const categoryFields = ['id', 'name', 'description'];

function pick<T>(items: readonly T[], n: number, count: number): T[] {
  const chosen: T[] = [];
  for (let i = 0; i < count; i++) chosen.push(items[(n + i * 7) % items.length]!);
  return [...new Set(chosen)];
}

/** The n-th distinct document of the churn, with its variables. */
export function churnDocument(n: number): { query: string; variables?: Record<string, unknown> } {
  const first = 1 + (n % 50);
  const fields = pick(petFields, n, 1 + (n % petFields.length)).join(' ');
  switch (n % 4) {
    case 0:
      return { query: `query Churn${n} { p${n}: pets(first: ${first}) { totalCount nodes { ${fields} } } }` };
    case 1:
      return {
        query: `query Churn${n}($first: Int) { c${n}: categories(first: $first) { nodes { ${pick(categoryFields, n, 2).join(' ')} pets(first: ${1 + (n % 10)}) { nodes { ${fields} } } } } }`,
        variables: { first: 1 + (n % 20) },
      };
    case 2:
      return { query: `{ a${n}: pet(id: "${1 + (n % 20)}") { ${fields} } b${n}: pet(id: "${1 + ((n + 1) % 20)}") { id name } }` };
    default:
      return {
        query: `query Churn${n} { i${n}: inventory(first: ${first}, filter: { status: AVAILABLE }) { nodes { petId quantity status } } s${n}: inventorySummary { status entries quantity } }`,
      };
  }
}

export interface ChurnProgress {
  sent: number;
  errors: number;
  /** Distinct documents sent so far. */
  documents: number;
}

/**
 * Sends `documents` distinct documents from `start` on, each `repeats` times (the repeats of one
 * document spread over the run, as clients repeat themselves), `concurrency` at a time.
 */
export async function runChurn(options: {
  url: string;
  start?: number;
  documents: number;
  repeats: number;
  concurrency: number;
  headers?: Record<string, string>;
  onProgress?: (progress: ChurnProgress) => void;
  /** Each answer's latency, and what was wrong with it (undefined when nothing). */
  onResponse?: (latencyMs: number, error: string | undefined) => void;
  /** Requests a second over all workers; as fast as answered when absent. */
  ratePerSecond?: number;
  signal?: AbortSignal;
}): Promise<ChurnProgress> {
  const start = options.start ?? 0;
  const total = options.documents * options.repeats;
  const progress: ChurnProgress = { sent: 0, errors: 0, documents: 0 };
  let next = 0;
  // Request i sends document start + (i / repeats), interleaved with its neighbours' repeats.
  const window = Math.max(options.concurrency * 4, 32);
  const documentOf = (i: number) => {
    const block = Math.floor(i / (window * options.repeats));
    const inBlock = i % (window * options.repeats);
    return start + block * window + (inBlock % window);
  };
  const interval = options.ratePerSecond ? (1000 * options.concurrency) / options.ratePerSecond : 0;
  const worker = async (index: number) => {
    let nextAt = performance.now() + (interval * index) / options.concurrency;
    while (next < total && !options.signal?.aborted) {
      if (interval) {
        const wait = nextAt - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (options.signal?.aborted) break;
        // No catching up on a backlog: a slow answer delays the next request, not a burst after it.
        nextAt = Math.max(nextAt + interval, performance.now() - interval);
      }
      const i = next++;
      const n = documentOf(i);
      if (n - start + 1 > progress.documents) progress.documents = n - start + 1;
      const sentAt = performance.now();
      let error: string | undefined;
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...options.headers },
          body: JSON.stringify(churnDocument(n)),
        });
        const text = await response.text();
        const body = JSON.parse(text) as { errors?: unknown };
        if (response.status !== 200 || body.errors) error = `${response.status} ${text.slice(0, 300)}`;
      } catch (caught) {
        error = String(caught);
      }
      if (error) progress.errors++;
      options.onResponse?.(performance.now() - sentAt, error);
      progress.sent++;
      if (progress.sent % 500 === 0) options.onProgress?.(progress);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, index) => worker(index)));
  return progress;
}
