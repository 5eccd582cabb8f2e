import { createHash } from 'node:crypto';
import { applyLiveQueryJSONPatchGenerator } from '@n1ru4l/graphql-live-query-patch-json-patch';
import {
  getLiveDirectiveArgumentValues,
  getLiveDirectiveNode,
  isLiveQueryOperationDefinitionNode,
  NoLiveMixedWithDeferStreamRule,
} from '@n1ru4l/graphql-live-query';
import { Repeater } from '@repeaterjs/repeater';
import { type ExecutionArgs, type ExecutionResult, getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { whileRequestLasts } from '../../database/cancellation.js';
import { DomainError, toGraphQLError } from '../../errors.js';
import { answerTags } from '../response-cache/dependencies.js';
import type { RequestContext } from '../types.js';
import { type LiveQueries, LiveQueryRefusal } from './store.js';

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
 * depends on, on any instance (store.ts). Each run after the first is a new
 * execution with a context of its own, so its resolvers check the caller's
 * scopes again and read afresh (on the primary: see useReadRouting's
 * onPrimary), bounded by REQUEST_TIMEOUT_MS like any request; its answer is
 * sent only when it differs from the last one sent. A client that asks
 * (`extensions: { "livePatch": "json-patch" }`) gets JSON patches
 * (RFC 6902, @n1ru4l/graphql-live-query-patch-json-patch) after the first
 * answer; `@live(throttle: ms)` asks for fewer runs (at most one a minute).
 * The token's expiry ends it as it ends a subscription
 * (useSubscriptionTokenExpiry). Last among the plugins that choose the
 * executor, so that it runs the one they chose.
 */
export function useLiveQueries(live: LiveQueries, { requestTimeoutMs }: { requestTimeoutMs: number }): Plugin<Context> {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoLiveMixedWithDeferStreamRule);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!isLiveOperation(args) || !takesStreams(args.contextValue)) return;
      setExecuteFn((liveArgs) => serveLive(live, executeFn as Execute, liveArgs, requestTimeoutMs) as never);
    },
  };
}

const EMPTY = new Set<string>();

/**
 * Whether the caller can receive more than one answer: over WebSocket always; over HTTP when it
 * accepts an event stream (SSE, graphql-sse) or multipart. A plain JSON request is answered once.
 */
function takesStreams(context: Context): boolean {
  if (!context.request) return true;
  const accept = context.request.headers.get('accept') ?? '';
  return accept.includes('text/event-stream') || accept.includes('multipart/mixed');
}

async function serveLive(live: LiveQueries, execute: Execute, args: ExecutionArgs, requestTimeoutMs: number) {
  const context = args.contextValue as Context;
  const wantsPatches = context.params?.extensions?.livePatch === JSON_PATCH_EXTENSION.livePatch;
  let invalidate: () => void = () => undefined;
  const registration = live.open(
    { tags: EMPTY, invalidate: () => invalidate() },
    { client: context.client ?? 'unknown', connection: context.connection },
  );
  if (registration instanceof LiveQueryRefusal) {
    const error = toGraphQLError(registration);
    return { errors: [Object.assign(error, { extensions: { ...error.extensions, limit: registration.limit } })] };
  }
  const tagsOf = (result: ExecutionResult) =>
    answerTags(args.schema, args.document, args.operationName, args.variableValues, result.errors?.length ? null : result.data);
  const fingerprint = (result: ExecutionResult) =>
    createHash('sha1').update(JSON.stringify({ data: result.data, errors: result.errors })).digest('base64url');

  let first: ExecutionResult;
  try {
    first = await whole(execute(args));
  } catch (error) {
    registration.close();
    throw error;
  }
  // A client may ask for fewer runs (`@live(throttle: ms)`), never for more than the setting allows.
  const operation = getOperationAST(args.document, args.operationName);
  const directive = operation ? getLiveDirectiveNode(operation) : undefined;
  const throttle = directive ? getLiveDirectiveArgumentValues(directive, args.variableValues).throttleValue : undefined;
  const minIntervalMs = Math.max(live.settings.minIntervalMs, Math.min(throttle ?? 0, 60_000));
  const answers = new Repeater<LiveResult>(async (push, stop) => {
    const stopListening = live.onEndAll(() => stop());
    let last = fingerprint(first);
    registration.retag(tagsOf(first));
    let due = false;
    let running = false;
    let lastRunAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const schedule = () => {
      timer = setTimeout(() => void runAgain(), Math.max(0, lastRunAt + minIntervalMs - Date.now()));
    };
    const runAgain = async () => {
      running = true;
      // Writes that come while it waits its turn are answered by this run.
      const release = await live.runTurn();
      due = false;
      lastRunAt = Date.now();
      try {
        if (stopped) return;
        const signal = AbortSignal.timeout(requestTimeoutMs);
        // A context of its own: per-request loaders and caches start empty, and the resolvers check scopes again.
        const { cacheNote: _none, ...fresh } = context;
        const result = await whileRequestLasts(signal, () => whole(execute({ ...args, contextValue: { ...fresh, deadline: signal }, signal } as ExecutionArgs)));
        if (stopped) return;
        registration.retag(tagsOf(result));
        const current = fingerprint(result);
        const changed = current !== last;
        registration.ran(changed);
        if (changed) {
          last = current;
          await push({ ...result, isLive: true });
        }
      } catch (error) {
        // A run that failed outright (not an answer with errors) is retried by the next write.
        registration.retag(new Set(['*:write']));
        if (!stopped) await push({ errors: [toGraphQLError(error instanceof DomainError ? error : new DomainError('UNAVAILABLE', 'The live query could not be run again; it will be on the next write.'))], isLive: true });
      } finally {
        release();
        running = false;
        if (due && !stopped) schedule();
      }
    };
    invalidate = () => {
      if (due) {
        registration.coalesced();
        return;
      }
      due = true;
      if (!running) schedule();
    };
    await push({ ...first, isLive: true });
    await stop;
    stopped = true;
    clearTimeout(timer);
    stopListening();
    registration.close();
  });
  const sent = (wantsPatches ? applyLiveQueryJSONPatchGenerator(answers) : answers) as AsyncIterableIterator<LiveResult>;
  // A client gone before its first answer was read never starts the repeater: its place is freed here too.
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => sent.next(),
    return: (value?: unknown) => {
      registration.close();
      return sent.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined });
    },
    throw: (error?: unknown) => {
      registration.close();
      return sent.throw?.(error) ?? Promise.reject(error);
    },
  } satisfies AsyncIterableIterator<LiveResult>;
}

/** A query's one answer (a live query has no @defer or @stream: NoLiveMixedWithDeferStreamRule). */
async function whole(result: unknown): Promise<ExecutionResult> {
  const answer = await result;
  if (isAsyncIterable(answer)) throw new Error('a live query answered in parts');
  return answer as ExecutionResult;
}
