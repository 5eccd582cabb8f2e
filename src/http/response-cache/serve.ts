import type { MaybePromise } from '@graphql-tools/utils';
import { trace } from '@opentelemetry/api';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainError } from '../../errors.js';
import { isWholeAnswer, passOn, wholeAnswer } from '../answer.js';
import { type CostBudget, type Refused, type Taken, throttled } from '../demand/budget.js';
import { refusal } from '../refusal.js';
import { requestWithBody } from '../request.js';
import type { CacheNote, DemandNote, GatewayEnv, RequestContext } from '../types.js';
import type { CachedAnswer, NewAnswer, ResponseCache } from './store.js';

/** What serving needs of GraphQL: yoga, answering a request with the gateway's server context. */
interface GraphQL {
  handle(request: Request, context: RequestContext): Promise<Response>;
}

/**
 * A GET or POST with the response cache on: a request sent before by a caller with the same
 * scopes, whose answer is kept and current, is answered from memory before GraphQL runs;
 * otherwise GraphQL answers it, and what the plugin noted as one to keep is kept. A batch (a
 * JSON array) is never kept: its parts would share one note.
 */
export async function answerWithCache(
  c: Context<GatewayEnv>,
  yoga: GraphQL,
  cache: ResponseCache,
  serverContext: RequestContext,
  budget?: CostBudget,
) {
  const body = c.req.method === 'POST' ? await c.req.text() : '';
  // The body is read: GraphQL reads it from here.
  const forward = () => (c.req.method === 'POST' ? requestWithBody(c.req.raw, body) : c.req.raw);
  if (/^\s*\[/.test(body)) return passOn(c, await yoga.handle(forward(), serverContext));
  const query = c.req.url.indexOf('?');
  const key = cache.keyOf({
    principal: serverContext.principal,
    method: c.req.method,
    search: query === -1 ? '' : c.req.url.slice(query),
    accept: c.req.header('accept') ?? '',
    contentType: c.req.header('content-type') ?? '',
    body,
  });
  const { demand } = serverContext;
  // Each answer that may be the hit is paid for as the lookup reads the write log to check it, so
  // that with Redis both go in one round trip; what it finds outdated is given back.
  const prepaid: Prepaid[] = [];
  const candidate = budget && demand ? (answer: CachedAnswer) => prepaid.push(prepay(answer, demand.client, budget)) : undefined;
  const lookup = await cache.lookup(key, candidate);
  const spentFor = lookup.kind === 'hit' ? prepaid.find((paid) => paid.answer === lookup.answer) : undefined;
  if (budget && demand) for (const paid of prepaid) if (paid !== spentFor) await giveBack(paid, demand.client, budget);
  if (lookup.kind === 'hit') {
    if (serverContext.trace) serverContext.trace.operation = lookup.answer.operation;
    // Nothing runs, so no operation span: the request's server span says where its answer came from.
    trace.getActiveSpan()?.setAttribute('petstore.response_cache', 'hit');
    let spent: string | DomainError = lookup.answer.body;
    if (budget && demand) {
      const taken = spentFor ? await spentFor.taken : await budget.take(demand.client, lookup.answer.cost.actual);
      spent = spendKept(lookup.answer, taken, demand, budget);
    }
    if (typeof spent !== 'string') return refusal(c, spent);
    return c.body(spent, lookup.answer.status as ContentfulStatusCode, { 'content-type': lookup.answer.contentType });
  }
  const note: CacheNote = {};
  let kept: NewAnswer | undefined;
  try {
    const response = await yoga.handle(forward(), { ...serverContext, ...(lookup.kind === 'miss' ? { cacheNote: note } : {}) });
    const contentType = response.headers.get('content-type') ?? '';
    if (!isWholeAnswer(contentType)) return passOn(c, response);
    const text = await response.text();
    // Kept with its cost found where demand control puts it: a hit is paid for without parsing the answer.
    const cost = note.tags && response.status === 200 ? costIn(text) : undefined;
    if (note.tags && cost) {
      kept = { body: text, status: response.status, contentType, operation: serverContext.trace?.operation, tags: note.tags, cost };
    }
    return wholeAnswer(c, response, text);
  } finally {
    // Always: requests waiting for this one's answer go on, with it or without.
    if (lookup.kind === 'miss') lookup.finish(kept, note.query === true);
  }
}

/**
 * A kept answer is paid for as the answer it is: its actual cost is taken of this client's budget
 * (THROTTLED when the budget does not hold it), and its `extensions.cost` says this client's budget left.
 */
function spendKept(answer: CachedAnswer, taken: Taken | Refused, demand: DemandNote, budget: CostBudget): string | DomainError {
  const { cost } = answer;
  demand.budget = taken;
  if (!taken.taken) return throttled(taken, cost.actual, budget.settings);
  const { estimated, actual } = cost;
  return `${answer.body.slice(0, cost.at)}${JSON.stringify({ estimated, actual, budgetLeft: taken.remaining })}}}`;
}

/** An answer's cost, taken of the client's budget before the lookup says whether it is the hit. */
interface Prepaid {
  answer: CachedAnswer;
  taken: MaybePromise<Taken | Refused>;
}

function prepay(answer: CachedAnswer, client: string, budget: CostBudget): Prepaid {
  const taken = budget.take(client, answer.cost.actual);
  // Awaited on every path (spent or given back); a failure is told there, never left unhandled.
  if (taken instanceof Promise) taken.catch(() => undefined);
  return { answer, taken };
}

/**
 * What was taken for an answer the lookup then found outdated goes back before the request runs
 * (and is charged as executed): no client pays twice for one request.
 */
async function giveBack(prepaid: Prepaid, client: string, budget: CostBudget) {
  try {
    if ((await prepaid.taken).taken) await budget.adjust(client, -prepaid.answer.cost.actual);
  } catch {
    // Budgets could not be reached (COST_BUDGET_ON_REDIS_FAILURE=refuse): the execution says so itself.
  }
}

const COST_EXTENSION = '"extensions":{"cost":';

/**
 * Where an answer says its cost: `extensions.cost`, which demand control puts last in every answer
 * it settles (`…,"extensions":{"cost":{…}}}`). Undefined for an answer that says none, or not there
 * (not kept then).
 */
function costIn(body: string): CachedAnswer['cost'] | undefined {
  const start = body.lastIndexOf(COST_EXTENSION);
  if (start === -1 || !body.endsWith('}}}')) return undefined;
  const at = start + COST_EXTENSION.length;
  let cost: unknown;
  try {
    cost = JSON.parse(body.slice(at, -2));
  } catch {
    return undefined;
  }
  const { estimated, actual } = (cost ?? {}) as { estimated?: unknown; actual?: unknown };
  return typeof estimated === 'number' && typeof actual === 'number' ? { estimated, actual, at } : undefined;
}
