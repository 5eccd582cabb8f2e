import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, type DocumentNode, getOperationAST, visit } from 'graphql';
import { isAsyncIterable, mapMaybePromise, type Plugin } from 'graphql-yoga';
import { COMPILED_EXECUTION } from '../../pothos-plugins/canonical-paths.js';

/**
 * Compiled execution (graphql-jit, through @envelop/graphql-jit) for the
 * queries worth compiling: those seen more than once (yoga's parse cache
 * hands every request with the same text the same DocumentNode, so a count per
 * DocumentNode is a count per document, and goes with it). A document sent
 * once runs on graphql-js, so unknown documents cannot grow memory. Enum
 * values are still serialised (PetStatus stays AVAILABLE): leaf serialisation
 * is left on. The Pothos plugin canonicalPaths keeps the Prisma plugin's
 * planned selections found under jit's path objects.
 */
export interface CompiledExecutionOptions {
  /** Compile a document from its `afterUses`-th execution on. */
  afterUses: number;
  /** Counts each execution by engine. */
  countExecution?: (engine: 'compiled' | 'graphql-js') => void;
}

type ExecuteFunction = Parameters<NonNullable<Plugin['onExecute']>>[0]['executeFn'];

export function useCompiledExecution({ afterUses, countExecution }: CompiledExecutionOptions): Plugin {
  const uses = new WeakMap<DocumentNode, number>();
  // Queries only: jit's executor takes no abort signal, so a mutation could not be stopped at the
  // request's deadline (useRequestDeadline), and a subscription's events are few.
  // Introspection, rare and answered by graphql-js' own resolvers, is left to graphql-js too, and so
  // are documents with @defer or @stream.
  const graphqlJsOnly = new WeakMap<DocumentNode, boolean>();
  const compilable = (document: DocumentNode, operationName: string | null | undefined) => {
    if (getOperationAST(document, operationName)?.operation !== 'query') return false;
    let found = graphqlJsOnly.get(document);
    if (found === undefined) {
      found = false;
      visit(document, {
        Field(node) {
          if (node.name.value === '__schema' || node.name.value === '__type') {
            found = true;
            return BREAK;
          }
          return undefined;
        },
        // graphql-jit knows no incremental delivery: @defer and @stream are graphql-js'.
        Directive(node) {
          if (node.name.value === 'defer' || node.name.value === 'stream') {
            found = true;
            return BREAK;
          }
          return undefined;
        },
      });
      graphqlJsOnly.set(document, found);
    }
    return !found;
  };
  const jit = useGraphQlJit(
    // Not jit's customJSONSerializer: with it, errors lost their path and DateTime values
    // failed (the suite, run compiled, showed both).
    {},
    {
      enableIf: (args) => {
        if (!compilable(args.document, args.operationName)) return false;
        const seen = (uses.get(args.document) ?? 0) + 1;
        uses.set(args.document, seen);
        const compiled = seen >= afterUses;
        if (compiled) (args.contextValue as Record<symbol, unknown>)[COMPILED_EXECUTION] = true;
        else countExecution?.('graphql-js');
        return compiled;
      },
    },
  );
  return {
    onExecute(payload) {
      const graphqlJs = payload.executeFn;
      let compiled: ExecuteFunction | undefined;
      const chosen = jit.onExecute?.({
        ...payload,
        setExecuteFn: (execute: ExecuteFunction) => {
          compiled = execute;
        },
      } as never);
      const choose = () => {
        if (!compiled) return;
        const execute = compiled;
        // A request that fails before execution (its variables do not fit their types) gets no
        // `data`; graphql-js words those errors better (jit's messages have no "Did you mean"),
        // and nothing has run yet, so graphql-js answers it.
        payload.setExecuteFn((args) =>
          mapMaybePromise(execute(args), (result) => {
            if (isAsyncIterable(result) || 'data' in result) {
              countExecution?.('compiled');
              return result;
            }
            countExecution?.('graphql-js');
            return graphqlJs(args);
          }),
        );
      };
      return mapMaybePromise(chosen, choose);
    },
  };
}
