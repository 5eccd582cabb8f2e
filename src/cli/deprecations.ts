import { parseArgs } from 'node:util';

// npm run deprecations [-- --metrics http://host:4000/metrics ...] [--header 'Name: value'] [--json]
// Who still calls what is deprecated: per deprecated element and client, the
// calls since the gateway started, how many were refused (brownout or sunset)
// and when the client was last seen, read from the gateway's /metrics. Give
// --metrics once per instance: their counts are added up.
const usage = `Usage: npm run deprecations -- [--metrics <url> ...] [--header 'Name: value' ...] [--json]
  --metrics  a gateway's metrics address (default http://127.0.0.1:$PORT/metrics, PORT 4000); repeat for each instance
  --header   a header to send with the request (for a protected /metrics)
  --json     the rows as JSON instead of a table`;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface DeprecatedUseRow {
  target: string;
  client: string;
  calls: number;
  /** Answered GONE: during a brownout, or after the sunset. */
  refused: number;
  /** ISO 8601, UTC; null when the instance that saw the calls does not say (an older gateway). */
  lastSeen: string | null;
}

const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;
const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;

/** The samples of the Prometheus text format (version 0.0.4) that `names` asks for. */
function parseSamples(text: string, names: ReadonlySet<string>): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match || !names.has(match[1]!)) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key!] = value!.replace(/\\(["\\n])/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const METRICS = new Set([
  'petstore_deprecated_use_total',
  'petstore_deprecated_last_seen_seconds',
  'petstore_legacy_refusals_total',
  'process_start_time_seconds',
]);

async function scrape(url: string, headers: Record<string, string>): Promise<Sample[]> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new Error(`Could not read ${url}: ${error instanceof Error ? (error.cause as Error | undefined)?.message ?? error.message : error}`);
  }
  if (!response.ok) throw new Error(`Could not read ${url}: it answered ${response.status}.`);
  return parseSamples(await response.text(), METRICS);
}

/** One row per deprecated element and client, over every instance; the oldest instance start. */
export function deprecatedUse(instances: Sample[][]): { rows: DeprecatedUseRow[]; since: string | null } {
  const rows = new Map<string, DeprecatedUseRow>();
  const row = (target: string, client: string) => {
    const key = JSON.stringify([target, client]);
    let found = rows.get(key);
    if (!found) {
      found = { target, client, calls: 0, refused: 0, lastSeen: null };
      rows.set(key, found);
    }
    return found;
  };
  let since: number | undefined;
  for (const samples of instances) {
    for (const { name, labels, value } of samples) {
      if (name === 'process_start_time_seconds') {
        since = since === undefined ? value : Math.min(since, value);
        continue;
      }
      const found = row(labels.target ?? '', labels.client ?? '');
      if (name === 'petstore_deprecated_use_total') found.calls += value;
      else if (name === 'petstore_legacy_refusals_total') found.refused += value;
      else {
        const seen = new Date(value * 1000).toISOString();
        if (found.lastSeen === null || seen > found.lastSeen) found.lastSeen = seen;
      }
    }
  }
  const sorted = [...rows.values()].sort(
    (a, b) => a.target.localeCompare(b.target) || (b.lastSeen ?? '').localeCompare(a.lastSeen ?? '') || a.client.localeCompare(b.client),
  );
  return { rows: sorted, since: since === undefined ? null : new Date(since * 1000).toISOString() };
}

function table(rows: readonly DeprecatedUseRow[]): string {
  const header = ['DEPRECATED', 'CLIENT', 'CALLS', 'REFUSED', 'LAST SEEN (UTC)'];
  const cells = rows.map((row) => [row.target, row.client, String(row.calls), String(row.refused), row.lastSeen ?? '?']);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column]!.length)));
  const numeric = new Set([2, 3]);
  const format = (line: string[]) =>
    line
      .map((cell, column) => (numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [format(header), ...cells.map(format)].join('\n');
}

try {
  const { values } = parseArgs({
    options: {
      metrics: { type: 'string', multiple: true, default: [] },
      header: { type: 'string', multiple: true, default: [] },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const urls = values.metrics.length > 0 ? values.metrics : [`http://127.0.0.1:${process.env.PORT || 4000}/metrics`];
  const headers: Record<string, string> = {};
  for (const header of values.header) {
    const colon = header.indexOf(':');
    if (colon < 1) throw new Error(`--header "${header}" is not Name: value.`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const { rows, since } = deprecatedUse(await Promise.all(urls.map((url) => scrape(url, headers))));
  if (values.json) {
    console.log(JSON.stringify({ since, instances: urls.length, rows }, null, 2));
  } else {
    const period = `since ${since ?? 'the start'} (when the ${urls.length > 1 ? `oldest of ${urls.length} instances` : 'gateway'} started)`;
    console.log(rows.length === 0 ? `No deprecated element was used ${period}.` : `Deprecated use ${period}:\n\n${table(rows)}`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  console.error(usage);
  process.exit(1);
}
