import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../types.js';

/**
 * Hands the request's deadline to the executor (graphql-tools' executor,
 * which yoga runs, stops starting resolvers once the signal is aborted): a
 * request already answered 503 TIMEOUT starts no further work, such as the
 * next mutation of a document or a relation not yet loaded. Queries only; a
 * subscription outlives its HTTP request by design.
 */
export function useRequestDeadline(): Plugin {
  return {
    onExecute({ args }) {
      const deadline = (args.contextValue as Partial<RequestContext>).deadline;
      if (deadline) (args as { signal?: AbortSignal }).signal = deadline;
    },
  };
}
