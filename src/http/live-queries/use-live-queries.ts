import { createHash } from 'node:crypto';
import { applyLiveQueryJSONPatchGenerator } from '@n1ru4l/graphql-live-query-patch-json-patch';
import {
  getLiveDirectiveArgumentValues,
  getLiveDirectiveNode,
  isLiveQueryOperationDefinitionNode,
  NoLiveMixedWithDeferStreamRule,
} from '@n1ru4l/graphql-live-query';
import { Repeater, SlidingBuffer } from '@repeaterjs/repeater';
import { type ExecutionArgs, type ExecutionResult, getOperationAST, print } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { whileRequestLasts } from '../../database/cancellation.js';
import { DomainError, toGraphQLError } from '../../errors.js';
import type { DemandControl } from '../demand/control.js';
import { throttled } from '../demand/budget.js';
import { answerTags } from '../dependency-tags/tags.js';
import type { RequestContext } from '../types.js';
import { type LiveQueries, LiveQueryRefusal, type LiveQueryWatch } from './store.js';

type Context = GraphQLContext & RequestContext & { params?: { extensions?: Record<string, unknown> }; request?: Request };
type Execute = (args: ExecutionArgs) => unknown;
type LiveResult = ExecutionResult & { isLive?: true };

/** What a client puts in its request's `extensions` to receive JSON patches after the first answer. */
export const JSON_PATCH_EXTENSION = { livePatch: 'json-patch' } as const;

/** Whether an operation is a query marked `@live` (and not `@live(if: false)`). */
export function isLiveOperation(args: Pick<ExecutionArgs, 'document' | 'operationName' | 'variableValues'>): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  return operation !== null && operation !== undefined && isLiveQueryOperationDefinitionNode(operation, args.variableValues);
}

/**
 * Queries marked `@live` (The Guild's convention, @n1ru4l/graphql-live-query):
 * answered at once, then again whenever a write touches what the last answer
 * depends on, on any instance (store.ts). Identical live queries (the same
 * document and variables, from callers with the same subject and scopes) share
 * each run after their first answers. Each such run is a new
 * execution with a context of its own, so its resolvers check the caller's
 * scopes again and read afresh (on the primary: see useReadRouting's
 * onPrimary), bounded by REQUEST_TIMEOUT_MS like any request; its answer is
 * sent only when it differs from the last one sent. A client that asks
 * (`extensions: { "livePatch": "json-patch" }`) gets JSON patches
 * (RFC 6902, @n1ru4l/graphql-live-query-patch-json-patch) after the first
 * answer; `@live(throttle: ms)` asks for fewer runs (at most one a minute).
 * The token's expiry ends it as it ends a subscription
 * (useSubscriptionTokenExpiry). With demand control, subscribing spends the
 * estimate (useDemandControl) and each run after it the actual cost of its
 * answer, of the budget of each client it serves: a client whose budget no
 * longer holds it gets THROTTLED, and its live query ends. Last among the
 * plugins that choose the executor, so that it runs the one they chose.
 */
export function useLiveQueries(
  live: LiveQueries,
  { requestTimeoutMs, demand }: { requestTimeoutMs: number; demand?: DemandControl },
): Plugin<Context> {
  const serveLive = serveLiveQueries(live, requestTimeoutMs, demand);
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoLiveMixedWithDeferStreamRule);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!isLiveOperation(args) || !takesStreams(args.contextValue)) return;
      setExecuteFn((liveArgs) => serveLive(executeFn as Execute, liveArgs) as never);
    },
  };
}

/**
 * Whether the caller can receive more than one answer: over WebSocket always; over HTTP when it
 * accepts an event stream (SSE, graphql-sse) or multipart. A plain JSON request is answered once.
 */
function takesStreams(context: Context): boolean {
  if (!context.request) return true;
  const accept = context.request.headers.get('accept') ?? '';
  return accept.includes('text/event-stream') || accept.includes('multipart/mixed');
}

/** One client's live query within a shared run: the answer it was last sent, and how to send it another. */
interface Member {
  last: string;
  send(result: LiveResult): void;
  /** Whose budget its runs spend (none without demand control's note). */
  client: string | undefined;
  /** Sends its last answer, an error, and ends it. */
  end(error: DomainError): void;
}

/** Identical live queries (same document, variables, caller's subject and scopes): one run serves them all. */
interface SharedRun {
  members: Set<Member>;
  invalidate(): void;
  /** Its last run's answer depends on these (the first member's first answer until it has run). */
  watch: LiveQueryWatch;
  end(): void;
}

const fingerprint = (result: ExecutionResult) =>
  createHash('sha1').update(JSON.stringify({ data: result.data, errors: result.errors })).digest('base64url');

/** Who shares a run: the same request, asked by a caller the answer cannot tell apart (subject and scopes). */
function sharingKey(args: ExecutionArgs): string {
  const { principal } = args.contextValue as Context;
  return createHash('sha256')
    .update(`${principal.subject ?? ''}\0${[...principal.scopes].sort().join(' ')}\0${args.operationName ?? ''}\0`)
    .update(`${JSON.stringify(args.variableValues ?? {})}\0${print(args.document)}`)
    .digest('base64url');
}

function serveLiveQueries(live: LiveQueries, requestTimeoutMs: number, demand: DemandControl | undefined) {
  const runs = new Map<string, SharedRun>();

  /** The run `args` share with identical live queries, started with their execution when there is none. */
  function sharedRun(key: string, execute: Execute, args: ExecutionArgs, first: ExecutionResult): SharedRun {
    const existing = runs.get(key);
    if (existing) return existing;
    const context = args.contextValue as Context;
    const tagsOf = (result: ExecutionResult) =>
      answerTags(args.schema, args.document, args.operationName, args.variableValues, result.errors?.length ? null : result.data);
    // A client may ask for fewer runs (`@live(throttle: ms)`), never for more than the setting allows.
    const operation = getOperationAST(args.document, args.operationName);
    const directive = operation ? getLiveDirectiveNode(operation) : undefined;
    const throttle = directive ? getLiveDirectiveArgumentValues(directive, args.variableValues).throttleValue : undefined;
    const minIntervalMs = Math.max(live.settings.minIntervalMs, Math.min(throttle ?? 0, 60_000));
    let due = false;
    let running = false;
    let lastRunAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const members = new Set<Member>();
    const schedule = () => {
      timer = setTimeout(() => void runAgain(), Math.max(0, lastRunAt + minIntervalMs - Date.now()));
    };
    /** Each client the run serves pays for it once, its actual cost; one whose budget does not hold it is ended. */
    const spend = async (result: ExecutionResult) => {
      if (!demand) return;
      const actual = demand.analysis.actual(args.document, args.operationName, args.variableValues ?? {}, result.data);
      const refusals = new Map<string, DomainError | undefined>();
      for (const member of [...members]) {
        if (member.client === undefined) continue;
        if (!refusals.has(member.client)) {
          // A budget that cannot be checked (Redis away, COST_BUDGET_ON_REDIS_FAILURE=refuse) refuses as it does a request.
          const refusal = await Promise.resolve(demand.budget.take(member.client, actual)).then(
            (taken) => (taken.taken ? undefined : throttled(taken, actual, demand.budget.settings)),
            (error: unknown) => {
              if (error instanceof DomainError) return error;
              throw error;
            },
          );
          refusals.set(member.client, refusal);
        }
        const refusal = refusals.get(member.client);
        if (refusal) {
          members.delete(member);
          member.end(refusal);
        }
      }
    };
    const sendAll = (result: LiveResult) => {
      const current = fingerprint(result);
      let pushes = 0;
      for (const member of members) {
        if (member.last === current) continue;
        member.last = current;
        member.send(result);
        pushes++;
      }
      return pushes;
    };
    const runAgain = async () => {
      running = true;
      // Writes that come while it waits its turn are answered by this run.
      const release = await live.runTurn();
      due = false;
      lastRunAt = Date.now();
      try {
        if (ended) return;
        const signal = AbortSignal.timeout(requestTimeoutMs);
        // A context of its own: per-request loaders and caches start empty, and the resolvers check scopes again.
        const { cacheNote: _none, ...fresh } = context;
        const result = await whileRequestLasts(signal, () => whole(execute({ ...args, contextValue: { ...fresh, deadline: signal }, signal } as ExecutionArgs)));
        if (ended) return;
        run.watch.retag(tagsOf(result));
        await spend(result);
        run.watch.ran(sendAll({ ...result, isLive: true }));
      } catch (error) {
        // A run that failed outright (not an answer with errors) is retried by the next write.
        run.watch.retag(new Set(['*:write']));
        const failure = error instanceof DomainError ? error : new DomainError('UNAVAILABLE', 'The live query could not be run again; it will be on the next write.');
        if (!ended) sendAll({ errors: [toGraphQLError(failure)], isLive: true });
      } finally {
        release();
        running = false;
        if (due && !ended) schedule();
      }
    };
    const run: SharedRun = {
      members,
      invalidate() {
        if (due) {
          run.watch.coalesced();
          return;
        }
        due = true;
        if (!running) schedule();
      },
      watch: live.watch({ tags: tagsOf(first), invalidate: () => run.invalidate() }),
      end() {
        ended = true;
        clearTimeout(timer);
        run.watch.close();
        runs.delete(key);
      },
    };
    runs.set(key, run);
    return run;
  }

  return async function serveLive(execute: Execute, args: ExecutionArgs) {
    const context = args.contextValue as Context;
    const wantsPatches = context.params?.extensions?.livePatch === JSON_PATCH_EXTENSION.livePatch;
    const admission = live.admit({ client: context.demand?.client ?? 'unknown', connection: context.connection });
    if (admission instanceof LiveQueryRefusal) {
      const error = toGraphQLError(admission);
      return { errors: [Object.assign(error, { extensions: { ...error.extensions, limit: admission.limit } })] };
    }
    let first: ExecutionResult;
    try {
      first = await whole(execute(args));
    } catch (error) {
      admission.close();
      throw error;
    }
    const key = sharingKey(args);
    // The latest answer wins: a client slower than the writes gets the newest state, not a backlog.
    const answers = new Repeater<LiveResult>(async (push, stop) => {
      const stopListening = live.onEndAll(() => stop());
      const run = sharedRun(key, execute, args, first);
      const member: Member = {
        last: fingerprint(first),
        send: (result) => void push(result),
        client: context.demand?.client,
        end: (error) => {
          void push({ errors: [toGraphQLError(error)], isLive: true });
          void stop();
        },
      };
      run.members.add(member);
      void push({ ...first, isLive: true });
      await stop;
      stopListening();
      run.members.delete(member);
      if (run.members.size === 0) run.end();
      admission.close();
    }, new SlidingBuffer(1));
    const sent = (wantsPatches ? applyLiveQueryJSONPatchGenerator(answers) : answers) as AsyncIterableIterator<LiveResult>;
    // A client gone before its first answer was read never starts the repeater: its place is freed here too.
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => sent.next(),
      return: (value?: unknown) => {
        admission.close();
        return sent.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined });
      },
      throw: (error?: unknown) => {
        admission.close();
        return sent.throw?.(error) ?? Promise.reject(error);
      },
    } satisfies AsyncIterableIterator<LiveResult>;
  };
}

/** A query's one answer (a live query has no @defer or @stream: NoLiveMixedWithDeferStreamRule). */
async function whole(result: unknown): Promise<ExecutionResult> {
  const answer = await result;
  if (isAsyncIterable(answer)) throw new Error('a live query answered in parts');
  return answer as ExecutionResult;
}
