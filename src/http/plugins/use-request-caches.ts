import { initContextCache } from '@pothos/core';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * The caches Pothos keeps for one request (scope-auth's evaluated scopes, whatever else its plugins
 * keep per request, the `_entities` loaders of src/schema/federation.ts) live in WeakMaps keyed by
 * the GraphQL context, and hold the context themselves. V8's young collections keep such an entry
 * whole while its key is reachable, and its value makes it so: a request checked against a rule
 * (every write is) could stay alive, with its HTTP request and response, until a full collection
 * took it. So each context gets a key of its own (Pothos' `initContextCache`), and a new one once
 * its execution has ended (a stream's once its last result is out): the old key and everything
 * cached under it become garbage at once, and a use after that starts afresh, as a new request
 * would.
 */
export function useRequestCaches(): Plugin {
  return {
    onContextBuilding({ extendContext }) {
      extendContext(initContextCache() as object);
    },
    onExecute() {
      return {
        onExecuteDone({ args, result }) {
          const release = () => {
            Object.assign(args.contextValue as object, initContextCache());
          };
          if (!isAsyncIterable(result)) {
            release();
            return undefined;
          }
          return { onEnd: release };
        },
      };
    },
  };
}
