/** The soak's samples, its growth test, and its report: Markdown, JSON (the caller writes it) and an SVG chart. */

export interface Sample {
  /** Seconds since the traffic began. */
  t: number;
  /** Before any traffic (start), under traffic (active), or in an idle gap (idle: with the defaults, at its very end). */
  phase: 'start' | 'active' | 'idle';
  rssMb: number | null;
  heapUsedMb: number | null;
  /** prom-client's event-loop delay p99 since the previous scrape. */
  eventLoopP99Ms: number | null;
  activeHandles: number | null;
  poolInUse: number | null;
  poolTotal: number | null;
  /** petstore_cache_entries by cache. */
  cacheEntries: Record<string, number>;
  cacheBytes: Record<string, number>;
  /** Over the interval since the previous sample. */
  requests: number;
  errors: number;
  p99Ms: number | null;
}

export interface Verdict {
  metric: string;
  /** Medians of the middle and the last third, of the samples taken under traffic and of those in the gaps. */
  active: { middle: number | null; last: number | null };
  idle: { middle: number | null; last: number | null } | null;
  /** Least-squares slope over the middle and last thirds, per hour (samples in the gaps where tested there). */
  slopePerHour: number | null;
  /** How much the last third may exceed the middle one: `relative` × middle + `absolute`. */
  tolerance: string;
  grew: boolean;
  note?: string;
}

export interface SoakDatabaseResult {
  database: 'server' | 'embedded';
  description: string;
  gatewayPid: number;
  samples: Sample[];
  /** Bounds of each cache (petstore_cache_max_entries, petstore_cache_max_bytes). */
  cacheMaxEntries: Record<string, number>;
  cacheMaxBytes: Record<string, number>;
  requests: number;
  errors: number;
  /** The first error of each kind, as the load generator saw it. */
  errorExamples: string[];
  distinctChurnDocuments: number;
  idleGaps: number;
  verdicts: Verdict[];
  grew: string[];
}

export interface SoakResults {
  startedAt: string;
  finishedAt: string;
  settings: Record<string, number | string>;
  machine: { nproc: number; cpuModel: string; memoryGb: number; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  git: { commit: string; dirty: boolean };
  node: string;
  method: string;
  databases: SoakDatabaseResult[];
  warnings: string[];
}

const median = (values: number[]) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function slope(points: Array<[number, number]>): number | null {
  if (points.length < 3) return null;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  if (sxx === 0) return null;
  return points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0) / sxx;
}

/** The samples of the warm-up (first third), the middle and the last third of the traffic, by time. */
export function thirds(samples: Sample[], durationS: number) {
  return {
    warmUp: samples.filter((s) => s.t <= durationS / 3),
    middle: samples.filter((s) => s.t > durationS / 3 && s.t <= (2 * durationS) / 3),
    last: samples.filter((s) => s.t > (2 * durationS) / 3),
  };
}

interface Check {
  metric: string;
  value: (sample: Sample) => number | null;
  relative: number;
  absolute: number;
  unit: string;
  /** Latency means something under traffic only. */
  activeOnly?: boolean;
  /** A bounded cache at its bound has stopped growing by construction, whatever its thirds say. */
  atBound?: (sample: Sample) => boolean;
}

/**
 * Growth test, per metric: after a warm-up (the first third), the median of the last third must not
 * exceed the median of the middle third by more than the tolerance, comparing like with like: samples
 * taken under traffic with each other, and samples taken in the idle gaps with each other (handles,
 * pool connections and heap differ a lot between the two, and a third may hold more of one kind).
 * Medians, not means or the last value, since heap and latency samples swing with garbage collection
 * and the machine's other load; the tolerances are wider than those swings measured on this machine,
 * and far narrower than a leak that matters over days.
 */
export function growthVerdicts(
  samples: Sample[],
  durationS: number,
  bounds: { maxEntries: Record<string, number>; maxBytes: Record<string, number> },
): Verdict[] {
  const caches = [...new Set(samples.flatMap((sample) => Object.keys(sample.cacheEntries)))].sort();
  const checks: Check[] = [
    { metric: 'RSS (MB)', value: (s) => s.rssMb, relative: 0.1, absolute: 16, unit: 'MB' },
    { metric: 'heap used (MB)', value: (s) => s.heapUsedMb, relative: 0.15, absolute: 8, unit: 'MB' },
    { metric: 'active handles', value: (s) => s.activeHandles, relative: 0, absolute: 5, unit: '' },
    { metric: 'pool connections in use', value: (s) => s.poolInUse, relative: 0, absolute: 2, unit: '' },
    { metric: 'pool connections open', value: (s) => s.poolTotal, relative: 0, absolute: 2, unit: '' },
    { metric: 'event-loop delay p99 (ms)', value: (s) => s.eventLoopP99Ms, relative: 0.5, absolute: 10, unit: 'ms', activeOnly: true },
    { metric: 'request p99 (ms)', value: (s) => s.p99Ms, relative: 0.5, absolute: 20, unit: 'ms', activeOnly: true },
    ...caches.map((cache) => ({
      metric: `cache ${cache} (entries)`,
      value: (s: Sample) => s.cacheEntries[cache] ?? null,
      relative: 0.1,
      absolute: 10,
      unit: '',
      atBound: (s: Sample) =>
        (bounds.maxEntries[cache] !== undefined && (s.cacheEntries[cache] ?? 0) >= 0.95 * bounds.maxEntries[cache]) ||
        (bounds.maxBytes[cache] !== undefined && (s.cacheBytes[cache] ?? 0) >= 0.9 * bounds.maxBytes[cache]),
    })),
  ];
  const { middle, last } = thirds(samples, durationS);
  return checks.map((check) => {
    const values = (set: Sample[], phase: Sample['phase']) =>
      set.filter((s) => s.phase === phase).map(check.value).filter((v): v is number => v !== null);
    const compare = (phase: Sample['phase']) => {
      const m = median(values(middle, phase));
      const l = median(values(last, phase));
      return { middle: m, last: l, grew: m !== null && l !== null && l > m * (1 + check.relative) + check.absolute };
    };
    const active = compare('active');
    const idle = check.activeOnly ? null : compare('idle');
    const slopePhase: Sample['phase'] = check.activeOnly ? 'active' : 'idle';
    const perSecond = slope(
      [...middle, ...last]
        .filter((s) => s.phase === slopePhase)
        .flatMap((s) => {
          const v = check.value(s);
          return v === null ? [] : [[s.t, v] as [number, number]];
        }),
    );
    const tolerance = `${check.relative ? `${check.relative * 100}% + ` : ''}${check.absolute}${check.unit ? ` ${check.unit}` : ''}`;
    let grew = active.grew || (idle?.grew ?? false);
    let note: string | undefined;
    const lastSample = last.at(-1);
    if (grew && check.atBound && lastSample && check.atBound(lastSample)) {
      grew = false;
      note = 'filled up to its bound, and stays there';
    }
    if (active.middle === null || active.last === null) note = 'not enough samples after the warm-up';
    return {
      metric: check.metric,
      active: { middle: active.middle, last: active.last },
      idle: idle ? { middle: idle.middle, last: idle.last } : null,
      slopePerHour: perSecond === null ? null : perSecond * 3600,
      tolerance,
      grew,
      ...(note ? { note } : {}),
    };
  });
}

const fmt = (value: number | null | undefined, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const totalEntries = (sample: Sample) => Object.values(sample.cacheEntries).reduce((sum, value) => sum + value, 0);

export function renderSoakMarkdown(results: SoakResults, chartFile: string): string {
  const lines: string[] = [];
  const minutes = (Number(results.settings.durationS) / 60).toFixed(1);
  lines.push('# Soak: the production build over time, on both databases');
  lines.push('');
  lines.push(
    `Run ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC: ${minutes} min of traffic on each database (both at once) on ` +
      `${results.machine.nproc} × ${results.machine.cpuModel}, ${fmt(results.machine.memoryGb, 1)} GB, load average ` +
      `${results.machine.loadAverageAtStart.join(' / ')} at the start and ${results.machine.loadAverageAtEnd.join(' / ')} at the end (a shared machine). ` +
      `Node ${results.node}, commit ${results.git.commit.slice(0, 10)}${results.git.dirty ? ' with uncommitted changes in src/ or prisma/' : ''}.`,
  );
  lines.push('');
  lines.push(results.method);
  lines.push('');
  for (const db of results.databases) {
    const first = db.samples[0];
    const final = db.samples.at(-1);
    lines.push(`## ${db.database === 'server' ? 'Server database' : 'Embedded default'}: ${db.grew.length ? `GREW (${db.grew.join(', ')})` : 'nothing grew'}, ${db.errors ? `${fmt(db.errors)} ERRORS` : 'no errors'}`);
    lines.push('');
    lines.push(
      `${db.description} ${fmt(db.requests)} requests, ${fmt(db.errors)} errors, ${fmt(db.distinctChurnDocuments)} distinct churn documents, ` +
        `${db.idleGaps} idle gaps. RSS ${fmt(first?.rssMb)} → ${fmt(final?.rssMb)} MB, heap used ${fmt(first?.heapUsedMb)} → ${fmt(final?.heapUsedMb)} MB ` +
        '(first and last sample).',
    );
    lines.push('');
    if (db.errorExamples.length) {
      lines.push('Errors (the first of each kind):');
      lines.push('');
      for (const example of db.errorExamples) lines.push(`- \`${example.replaceAll('`', "'").slice(0, 300)}\``);
      lines.push('');
    }
    lines.push('| t (s) | phase | RSS MB | heap MB | loop p99 ms | handles | pool in use / open | cache entries (all) | requests | p99 ms | errors |');
    lines.push('|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const s of db.samples) {
      lines.push(
        `| ${s.t} | ${s.phase} | ${fmt(s.rssMb)} | ${fmt(s.heapUsedMb, 1)} | ${fmt(s.eventLoopP99Ms, 1)} | ${fmt(s.activeHandles)} | ` +
          `${fmt(s.poolInUse)} / ${fmt(s.poolTotal)} | ${fmt(totalEntries(s))} | ${fmt(s.requests)} | ${fmt(s.p99Ms, 1)} | ${fmt(s.errors)} |`,
      );
    }
    lines.push('');
    const caches = Object.keys(final?.cacheEntries ?? {}).sort();
    if (caches.length) {
      lines.push(
        `Caches at the end (entries / bound): ${caches
          .map((cache) => `${cache} ${fmt(final?.cacheEntries[cache])} / ${fmt(db.cacheMaxEntries[cache])}`)
          .join(', ')}.`,
      );
      lines.push('');
    }
    lines.push('| Metric | under traffic: middle → last third (medians) | end of gaps: middle → last third | allowed growth | slope, per hour | verdict |');
    lines.push('|---|--:|--:|--:|--:|---|');
    for (const v of db.verdicts) {
      const pair = (p: { middle: number | null; last: number | null } | null) => (p ? `${fmt(p.middle, 1)} → ${fmt(p.last, 1)}` : '–');
      lines.push(
        `| ${v.metric} | ${pair(v.active)} | ${pair(v.idle)} | ${v.tolerance} | ${fmt(v.slopePerHour, 1)} | ${v.grew ? '**grew**' : 'steady'}${v.note ? ` (${v.note})` : ''} |`,
      );
    }
    lines.push('');
  }
  if (results.warnings.length) {
    lines.push('## Warnings');
    lines.push('');
    for (const warning of results.warnings) lines.push(`- ${warning}`);
    lines.push('');
  }
  lines.push(`![The samples over time](${chartFile})`);
  lines.push('');
  return lines.join('\n');
}

const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * Small multiples, one panel per measure, a line per database; dashed lines mark the end of the
 * warm-up and the start of the last third, the two the growth test compares.
 */
export function renderSoakSvg(results: SoakResults): string {
  const panels: Array<{ title: string; value: (s: Sample) => number | null }> = [
    { title: 'RSS (MB)', value: (s) => s.rssMb },
    { title: 'Heap used (MB)', value: (s) => s.heapUsedMb },
    { title: 'Event-loop delay p99 (ms)', value: (s) => s.eventLoopP99Ms },
    { title: 'Active handles', value: (s) => s.activeHandles },
    { title: 'Pool connections in use', value: (s) => s.poolInUse },
    { title: 'Pool connections open', value: (s) => s.poolTotal },
    { title: 'Cache entries, all caches', value: totalEntries },
    { title: 'Requests over the interval', value: (s) => s.requests },
    { title: 'Request p99 over the interval (ms)', value: (s) => s.p99Ms },
    { title: 'Errors over the interval', value: (s) => s.errors },
  ];
  const colors: Record<string, string> = { server: '#1f77b4', embedded: '#e8710a' };
  const columns = 2;
  const width = 460;
  const height = 190;
  const margin = { left: 52, right: 14, top: 28, bottom: 30 };
  const legend = 30;
  const totalWidth = columns * width;
  const totalHeight = legend + Math.ceil(panels.length / columns) * height;
  const durationS = Number(results.settings.durationS);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${totalWidth}" height="${totalHeight}" viewBox="0 0 ${totalWidth} ${totalHeight}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${totalWidth}" height="${totalHeight}" fill="white"/>`);
  let x = 12;
  for (const db of results.databases) {
    out.push(`<line x1="${x}" y1="16" x2="${x + 24}" y2="16" stroke="${colors[db.database]}" stroke-width="2"/>`);
    out.push(`<text x="${x + 30}" y="20">${db.database === 'server' ? 'server database' : 'embedded default'}</text>`);
    x += 170;
  }
  out.push(`<text x="${x}" y="20" fill="#666">solid: under traffic · dashed: in the idle gaps · grey: end of warm-up, start of last third · minutes</text>`);
  panels.forEach((panel, index) => {
    const ox = (index % columns) * width;
    const oy = legend + Math.floor(index / columns) * height;
    const plotW = width - margin.left - margin.right;
    const plotH = height - margin.top - margin.bottom;
    const all = results.databases.flatMap((db) => db.samples.map(panel.value).filter((v): v is number => v !== null));
    const max = Math.max(1, ...all) * 1.1;
    const sx = (t: number) => ox + margin.left + (plotW * t) / Math.max(1, durationS);
    const sy = (v: number) => oy + margin.top + plotH - (plotH * v) / max;
    out.push(`<text x="${ox + margin.left}" y="${oy + 18}" font-weight="bold">${escape(panel.title)}</text>`);
    out.push(`<rect x="${ox + margin.left}" y="${oy + margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#ccc"/>`);
    for (const fraction of [0, 0.5, 1]) {
      const value = max * fraction;
      const y = sy(value);
      out.push(`<line x1="${ox + margin.left}" y1="${y}" x2="${ox + margin.left + plotW}" y2="${y}" stroke="#eee"/>`);
      out.push(`<text x="${ox + margin.left - 4}" y="${y + 4}" text-anchor="end" fill="#444">${fmt(value, value > 0 && value < 10 ? 1 : 0)}</text>`);
    }
    for (const boundary of [durationS / 3, (2 * durationS) / 3]) {
      out.push(
        `<line x1="${sx(boundary)}" y1="${oy + margin.top}" x2="${sx(boundary)}" y2="${oy + margin.top + plotH}" stroke="#999" stroke-dasharray="4 3"/>`,
      );
    }
    const tickStep = durationS > 1200 ? 300 : durationS > 300 ? 120 : 60;
    for (let t = 0; t <= durationS; t += tickStep) {
      out.push(`<text x="${sx(t)}" y="${oy + margin.top + plotH + 14}" text-anchor="middle" fill="#444">${fmt(t / 60, t % 60 ? 1 : 0)}</text>`);
    }
    // Samples under traffic and samples in the gaps, one line each: joined, they would only zigzag.
    for (const db of results.databases) {
      for (const phase of ['active', 'idle'] as const) {
        const points = db.samples
          .filter((s) => s.phase === phase || s.phase === 'start')
          .flatMap((s) => {
            const v = panel.value(s);
            return v === null ? [] : [`${sx(s.t).toFixed(1)},${sy(v).toFixed(1)}`];
          });
        if (points.length) {
          out.push(
            `<polyline fill="none" stroke="${colors[db.database]}" stroke-width="1.6"${phase === 'idle' ? ' stroke-dasharray="5 3"' : ''} points="${points.join(' ')}"/>`,
          );
        }
      }
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
