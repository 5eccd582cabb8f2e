import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { DomainError, toGraphQLError } from '../../errors.js';
import { isLiveOperation } from '../live-queries/use-live-queries.js';

/** setTimeout's longest delay (about 24.8 days); a later expiry is not watched. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

const EXPIRED = Symbol('expired');

/**
 * The events of `source` until `expiresAt`; then one result with
 * UNAUTHENTICATED, and the end. An iterator rather than an async generator:
 * a client that unsubscribes while no event is due must release the source at
 * once, and a generator would hold its return() until the next event.
 */
function untilExpiry(
  source: AsyncIterable<ExecutionResult>,
  expiresAt: number,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const deadline = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), Math.max(0, expiresAt - Date.now()));
  });
  const finish = async () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    await iterator.return?.();
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (finished) return { done: true, value: undefined };
      const next = await Promise.race([iterator.next(), deadline]);
      if (next === EXPIRED) {
        await finish();
        const error = new DomainError('UNAUTHENTICATED', 'The token has expired; subscribe again with a new one.');
        return { done: false, value: { errors: [toGraphQLError(error)] } };
      }
      if (next.done) {
        finished = true;
        clearTimeout(timer);
      }
      return next;
    },
    async return() {
      await finish();
      return { done: true, value: undefined };
    },
    async throw(error: unknown) {
      await finish();
      throw error;
    },
  };
}

/**
 * A subscription, or a live query, lives no longer than the token it was opened
 * with: when the token expires, the subscriber gets one UNAUTHENTICATED error
 * and the operation completes, over SSE and WebSocket alike. (graphql-ws takes the
 * token once per connection: a WebSocket client reconnects with a new one.)
 */
export function useSubscriptionTokenExpiry(): Plugin<GraphQLContext> {
  return {
    // A live query (@live) answers as a stream too, and ends the same way.
    onExecute({ args }) {
      const expiresAt = (args.contextValue as GraphQLContext).principal.expiresAt;
      if (expiresAt === undefined || expiresAt - Date.now() > LONGEST_TIMER_MS || !isLiveOperation(args)) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(untilExpiry(result, expiresAt));
        },
      };
    },
    onSubscribe({ args }) {
      const expiresAt = (args.contextValue as GraphQLContext).principal.expiresAt;
      if (expiresAt === undefined || expiresAt - Date.now() > LONGEST_TIMER_MS) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(untilExpiry(result, expiresAt));
        },
      };
    },
  };
}
