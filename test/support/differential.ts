import { type DocumentNode, getOperationAST, parse } from 'graphql';

/**
 * The differential check of the gateway's two engines, over every query the suite sends: a test
 * gateway with query plans on (as production runs) is served through this front, which also sends
 * each GraphQL query it answers as JSON to a reference gateway with the same settings and plans off
 * (graphql-js alone), on a database client of its own, and compares the two answers whole: status,
 * content type and body, errors included (message, path, locations, code, status). Writes go to the
 * planned gateway only (they cannot run twice; test/graphql/write-plans.test.ts compares planned
 * writes on two databases).
 *
 * Left out of the comparison, by design: what differs between two instances and not between two
 * engines (the budget left, the request and trace ids), and answers that speak for the moment, not
 * the document (a time limit, an outage, a rate or budget refusal).
 */

export interface Mismatch {
  request: string;
  planned: { status: number; contentType: string; body: string };
  reference: { status: number; contentType: string; body: string };
}

export interface Differential {
  /** Answers compared both ways. */
  checks: number;
  mismatches: Mismatch[];
}

type Fetch = (request: Request, env?: object) => Response | Promise<Response>;

const MOMENTARY = new Set(['TIMEOUT', 'UNAVAILABLE', 'RATE_LIMITED', 'THROTTLED']);
const INSTANCE_FIELDS = new Set(['requestId', 'traceId']);

/** A fetch handler for the planned gateway that compares each query's answer with the reference's. */
export function withDifferential(planned: Fetch, reference: Fetch, differential: Differential): Fetch {
  return async (request, env) => {
    const url = new URL(request.url);
    if (url.pathname !== '/graphql' || (request.method !== 'GET' && request.method !== 'POST')) return planned(request, env);
    const accept = request.headers.get('accept') ?? '';
    if (accept.includes('text/event-stream') || accept.includes('multipart/mixed')) return planned(request, env);
    const body = request.method === 'POST' ? await request.text() : undefined;
    const copy = () => new Request(request.url, { method: request.method, headers: request.headers, ...(body === undefined ? {} : { body }) });
    if (!readsOnly(url, body, request.headers.get('content-type'))) return planned(copy(), env);
    const answer = await planned(copy(), env);
    const text = await answer.text();
    const answered = { status: answer.status, contentType: answer.headers.get('content-type') ?? '', body: text };
    const other = await reference(copy(), env);
    const expected = { status: other.status, contentType: other.headers.get('content-type') ?? '', body: await other.text() };
    const compared = compare(answered, expected);
    if (compared !== 'skipped') differential.checks++;
    if (compared === 'different') {
      differential.mismatches.push({ request: `${request.method} ${url.pathname}${url.search} ${body ?? ''}`, planned: answered, reference: expected });
    }
    return new Response(text, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  };
}

/**
 * Whether a request can only read: every operation it carries is a query (a document that does not
 * parse, or names no operation it has, is refused before anything runs, and compared too). A
 * document sent by id is not: its text is not in the request.
 */
function readsOnly(url: URL, body: string | undefined, contentType: string | null): boolean {
  let params: unknown;
  if (body === undefined) {
    params = { query: url.searchParams.get('query'), operationName: url.searchParams.get('operationName') };
  } else {
    if (!/^application\/json\b/i.test(contentType ?? '')) return false;
    try {
      params = JSON.parse(body);
    } catch {
      return true;
    }
  }
  const all = Array.isArray(params) ? params : [params];
  return all.every((one) => {
    const { query, operationName } = (one ?? {}) as { query?: unknown; operationName?: unknown };
    if (typeof query !== 'string') return false;
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch {
      return true;
    }
    const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
    return !operation || operation.operation === 'query';
  });
}

function compare(planned: Mismatch['planned'], reference: Mismatch['reference']): 'same' | 'different' | 'skipped' {
  const a = normalized(planned.body);
  const b = normalized(reference.body);
  if (a.momentary || b.momentary) return 'skipped';
  const same = planned.status === reference.status && planned.contentType === reference.contentType && a.text === b.text;
  return same ? 'same' : 'different';
}

/** The body without what belongs to the instance, and whether it answers for the moment only. */
function normalized(body: string): { text: string; momentary: boolean } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { text: body, momentary: false };
  }
  let momentary = false;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    const result: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (INSTANCE_FIELDS.has(key) || key === 'budgetLeft') continue;
      if (key === 'code' && typeof inner === 'string' && MOMENTARY.has(inner)) momentary = true;
      result[key] = strip(inner);
    }
    return result;
  };
  return { text: JSON.stringify(strip(parsed)), momentary };
}
