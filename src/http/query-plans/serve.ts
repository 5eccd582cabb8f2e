import { context as activeContext } from '@opentelemetry/api';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { PrismaClient } from '../../database/client.js';
import type { ReadRouting } from '../../database/replicas.js';
import type { DomainEvent, EventPublisher } from '../../domain/events.js';
import type { Lookups } from '../../domain/lookups.js';
import type { WholeAnswer } from '../answer.js';
import { WRITE_POSITION_HEADER } from '../middleware/read-after.js';
import { activeOperationSpan, describeOperation, inSpan, startOperationSpan } from '../../observability/tracing/spans.js';
import { operationFacts } from '../plugins/operation-facts.js';
import { answerTags } from '../response-cache/dependencies.js';
import { tellWrite, type WriteListener } from '../response-cache/use-write-tags.js';
import type { RequestContext } from '../types.js';
import type { QueryPlans } from './plans.js';

/** What answering needs of yoga: a request, with the gateway's server context. */
export interface GraphQLFetch {
  fetch(request: Request, context: RequestContext): Promise<Response> | Response;
}

export interface PlannedOptions {
  schema: GraphQLSchema;
  plans: QueryPlans;
  prisma: PrismaClient;
  readRouting?: ReadRouting;
  lookups: Lookups;
  /** With the response cache on, queries read the primary (a kept answer must never be behind a write). */
  readPrimary: boolean;
  /** Where a planned write's events go (the event bus), and who is told what it changed (as useWriteTags tells them). */
  events: EventPublisher;
  writeListeners: readonly WriteListener[];
  countExecution?: (engine: 'plan') => void;
  /**
   * Runs each request a plan answered field by field too, and says where the two answers differ
   * (the tests' differential check, over every query the suite sends).
   */
  verify?: PlanVerification;
  /** Traces are sent (OTEL_*): a request begins its GraphQL operation span here, as yoga's would. */
  traced?: boolean;
}

export interface PlanVerification {
  /** Yoga without plans, on a database client of its own (so the suite's statement counts stay the plan's). */
  fieldByField: GraphQLFetch;
  /** The database client a plan runs on when it checks an answer yoga gave. */
  prisma: PrismaClient;
  /** Each comparison made, the same or not. */
  onCheck?(): void;
  onMismatch(mismatch: PlanMismatch): void;
}

export interface PlanMismatch {
  text: string;
  variables: Record<string, unknown>;
  planned: { status: number; contentType: string; body: string };
  fieldByField: { status: number; contentType: string; body: string };
}

/** A POST (JSON) or GET carrying a document's text and nothing a plan does not handle. */
interface PlainRequest {
  /** A POST's body, parsed. */
  params?: Record<string, unknown>;
  text: string;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  contentType: string;
}

const PARAMETERS = new Set(['query', 'variables', 'operationName', 'extensions']);

/**
 * GraphQL behind its plans: a request whose document has a plan (a query of a text yoga has
 * already run, see plans.ts) is answered by the plan; anything else, and anything the plan cannot
 * answer exactly, by yoga, which answers it as before. Yoga's whole answers and the plans' go out
 * the same way (src/http/answer.ts).
 */
export function plannedGraphQL(yoga: GraphQLFetch, options: PlannedOptions) {
  // What a planned write runs on: the primary, and the event bus.
  const write = { prisma: options.prisma, events: options.events };
  const answer = async (request: Request, context: RequestContext, body: string, plain: PlainRequest | undefined): Promise<Response | WholeAnswer> => {
    // A request already answered at its time limit starts nothing more (yoga's executor checks the same signal).
    if (plain && !context.deadline?.aborted) {
      const prisma = options.readPrimary || !options.readRouting?.enabled ? options.prisma : options.readRouting.reader(context.readAfter).prisma;
      const inputs = {
        text: plain.text,
        operationName: plain.operationName,
        variables: plain.variables,
        scopes: context.principal.scopes,
        prisma,
        lookups: options.lookups,
        demand: context.demand,
        write,
      };
      const outcome = options.traced ? await inSpan('graphql.plan', () => options.plans.run(inputs)) : await options.plans.run(inputs);
      if (outcome?.kind === 'write failed') {
        // Yoga answers the outcome (use-query-plans.ts), as graphql-js would have; it does not write again.
        context.settledWrite = outcome.failed;
        const { document, variables, published } = outcome.failed;
        if (published.length > 0) await tellPlannedWrite(options, document, plain, variables, published);
      }
      const planned = outcome?.kind === 'answered' ? outcome : undefined;
      if (planned) {
        options.countExecution?.('plan');
        if (options.traced) describeOperation(activeOperationSpan()!, planned.document, plain.operationName, plain.text);
        const facts = operationFacts(options.schema, planned.document, plain.operationName);
        if (context.trace) context.trace.operation = facts.name;
        // A write's answer is never kept (nor given to identical requests waiting on it): only a query's.
        if (context.cacheNote && !planned.published) {
          context.cacheNote.query = true;
          context.cacheNote.tags = [...answerTags(options.schema, planned.document, plain.operationName, plain.variables, planned.data)];
        }
        const extensions: Record<string, unknown> = { cost: planned.cost };
        const answer: WholeAnswer = { kind: 'whole', status: 200, contentType: plain.contentType, text: '' };
        if (planned.published) {
          // As useWriteTags and useReadRouting do for yoga's mutations: told before the answer, and where to read after it.
          await tellPlannedWrite(options, planned.document, plain, planned.variables, planned.published);
          const position = options.readRouting?.enabled ? await options.readRouting.writePosition() : undefined;
          if (position !== undefined) {
            extensions.writePosition = position;
            answer.headers = { [WRITE_POSITION_HEADER]: position };
          }
        }
        answer.text = JSON.stringify({ data: planned.data, extensions });
        // A write is never run twice: only queries are answered field by field again to compare.
        if (options.verify && !planned.published) await verify(options.verify, request, body, context, plain, answer);
        return answer;
      }
    }
    // The body is read: yoga takes the parameters parsed from it (useReadBody), or a request of its own that carries it.
    let forwarded = request;
    if (plain?.params) context.bodyParams = plain.params;
    else if (request.method === 'POST') forwarded = new Request(request.url, { method: 'POST', headers: request.headers, body });
    const response = await yoga.fetch(forwarded, context);
    if (!options.verify || !plain || response.status !== 200) return response;
    // Also a document's first request (which yoga answers, and its plan is made from): its plan
    // answers it again, on the verification's own client, and the two are compared.
    const text = await response.text();
    if (MOMENTARY.test(text)) return new Response(text, { status: response.status, headers: response.headers });
    const planned = await options.plans.run({
      text: plain.text,
      operationName: plain.operationName,
      variables: plain.variables,
      scopes: context.principal.scopes,
      prisma: options.verify.prisma,
      lookups: options.lookups,
    });
    // Given no write context, a mutation's plan does not run (it would write again).
    if (planned?.kind === 'answered') {
      const contentType = response.headers.get('content-type') ?? '';
      compare(options.verify, plain, { status: 200, contentType: plain.contentType, text: JSON.stringify({ data: planned.data, extensions: { cost: planned.cost } }) }, {
        status: response.status,
        contentType,
        text,
      });
    }
    return new Response(text, { status: response.status, headers: response.headers });
  };
  return {
    async fetch(request: Request, context: RequestContext): Promise<Response | WholeAnswer> {
      const body = request.method === 'POST' ? await request.text() : '';
      const plain = plainRequest(request, body);
      if (!plain || !options.traced) return answer(request, context, body, plain);
      // The operation span begins before a plan is looked for: if yoga answers after all, it uses this one.
      const operation = startOperationSpan();
      try {
        return await activeContext.with(operation.context, () => answer(request, context, body, plain));
      } finally {
        operation.span.end();
      }
    },
  };
}

function tellPlannedWrite(
  options: PlannedOptions,
  document: DocumentNode,
  plain: PlainRequest,
  variables: Record<string, unknown>,
  published: DomainEvent[],
) {
  return tellWrite(options.writeListeners, options.prisma, { schema: options.schema, document, operationName: plain.operationName, variableValues: variables }, published);
}

const MOMENTARY = /"code":"(?:TIMEOUT|UNAVAILABLE)"/;

function compare(
  verification: PlanVerification,
  plain: PlainRequest,
  planned: { status: number; contentType: string; text: string },
  fieldByField: { status: number; contentType: string; text: string },
) {
  // A time limit or an outage answers for the moment, not for the document: nothing to compare.
  if (MOMENTARY.test(fieldByField.text) || MOMENTARY.test(planned.text)) return;
  verification.onCheck?.();
  // The budget left differs by design (the two runs are one request, spent once); the estimate and
  // the actual cost of the two answers must be the same.
  const withoutBudget = (text: string) => {
    const answer = JSON.parse(text) as { extensions?: { cost?: { budgetLeft?: number } } };
    delete answer.extensions?.cost?.budgetLeft;
    return JSON.stringify(answer);
  };
  const same = (a: string, b: string) => {
    try {
      return withoutBudget(a) === withoutBudget(b);
    } catch {
      return a === b;
    }
  };
  if (planned.status !== fieldByField.status || planned.contentType !== fieldByField.contentType || !same(planned.text, fieldByField.text)) {
    verification.onMismatch({
      text: plain.text,
      variables: plain.variables,
      planned: { status: planned.status, contentType: planned.contentType, body: planned.text },
      fieldByField: { status: fieldByField.status, contentType: fieldByField.contentType, body: fieldByField.text },
    });
  }
}

async function verify(verification: PlanVerification, request: Request, body: string, context: RequestContext, plain: PlainRequest, planned: WholeAnswer) {
  const copy = request.method === 'POST' ? new Request(request.url, { method: 'POST', headers: request.headers, body }) : new Request(request.url, { headers: request.headers });
  const response = await verification.fieldByField.fetch(copy, { ...context, cacheNote: undefined, trace: undefined, demand: undefined, bodyParams: undefined });
  compare(verification, plain, planned, { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() });
}

function plainRequest(request: Request, body: string): PlainRequest | undefined {
  const contentType = answerType(request.headers.get('accept'));
  if (!contentType) return undefined;
  let params: Record<string, unknown>;
  if (request.method === 'POST') {
    if (!/^application\/json\b/i.test(request.headers.get('content-type') ?? '')) return undefined;
    try {
      params = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  } else if (request.method === 'GET') {
    const search = new URL(request.url).searchParams;
    params = {};
    for (const [name, value] of search) params[name] = value;
    if (typeof params.variables === 'string') {
      try {
        params.variables = JSON.parse(params.variables);
      } catch {
        return undefined;
      }
    }
  } else {
    return undefined;
  }
  if (!params || typeof params !== 'object' || Array.isArray(params)) return undefined;
  for (const name of Object.keys(params)) if (!PARAMETERS.has(name)) return undefined;
  const { query, operationName, variables, extensions } = params;
  if (typeof query !== 'string') return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  // Extensions carry what plans do not handle (persisted queries, a read position over the body).
  if (extensions !== undefined && extensions !== null && (typeof extensions !== 'object' || Object.keys(extensions).length > 0)) return undefined;
  return {
    ...(request.method === 'POST' ? { params } : {}),
    text: query,
    operationName: operationName ?? undefined,
    variables: (variables ?? {}) as Record<string, unknown>,
    contentType,
  };
}

/**
 * The content type of a whole answer for `accept`, as yoga chooses it: the first of the listed
 * types it serves as JSON. Undefined when yoga would answer otherwise (an event stream, multipart,
 * 406): those requests are yoga's.
 */
function answerType(accept: string | null): string | undefined {
  if (!accept) return 'application/json; charset=utf-8';
  let chosen: string | undefined;
  for (const entry of accept.split(',')) {
    const type = entry.split(';')[0]!.trim().toLowerCase();
    if (type === 'application/graphql-response+json') chosen ??= 'application/graphql-response+json; charset=utf-8';
    else if (type === 'application/json' || type === '*/*' || type === 'application/*') chosen ??= 'application/json; charset=utf-8';
    else return undefined;
  }
  return chosen;
}
