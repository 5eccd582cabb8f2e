import { BREAK, type DocumentNode, type ExecutionResult, getOperationAST, visit } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { isAsyncIterable, mapMaybePromise, type Plugin } from 'graphql-yoga';
import type { CompiledExecutionSettings } from '../../config.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { CANONICAL_PATHS, createPathTree, type PathTree, requestPaths } from '../../pothos-plugins/canonical-paths.js';

/**
 * Compiled execution (graphql-jit) for the queries that earn it. Compiling a
 * document takes about 7 ms and its generated code (some 100 KB of source for
 * a page with relations) stays in memory; it saves about half a millisecond
 * per execution of a page. So a document is compiled only once it has run
 * `afterUses` times within `windowMs`, and at most `maxEntries` compiled
 * documents (and `maxBytes` of generated source) are kept, least recently
 * used first out: a gateway meeting documents it never sees again (clients
 * that inline literals, tools, scanners) compiles none of them, and its
 * memory stays where the document cache puts it.
 *
 * Enum values are still serialised (PetStatus stays AVAILABLE): leaf
 * serialisation is left on. The Pothos plugin canonicalPaths keeps the Prisma
 * plugin's planned selections found under jit's path objects, through the
 * path tree each compiled operation holds.
 */
export interface CompiledExecutionOptions extends CompiledExecutionSettings {
  /** Counts each execution by engine. */
  countExecution?: (engine: 'compiled' | 'graphql-js') => void;
  caches?: CacheMetrics;
}

/** One document's compiled operations (by operation name), with their path trees. */
interface Compiled {
  operations: Map<string, { query: CompiledQuery; paths: PathTree } | 'not compilable'>;
  /** The generated source's size, the bulk of what a compiled operation keeps. */
  bytes: number;
}

/** Uses of a document within the current window. */
interface Uses {
  count: number;
  since: number;
}

const generatedSource = (query: CompiledQuery) =>
  (query as { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation?: string }).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation ?? '';

type ExecuteFunction = Parameters<NonNullable<Plugin['onExecute']>>[0]['executeFn'];

/**
 * How many response path links one compiled operation shares across its requests: a page of 100 rows
 * with three relations needs some 400, twenty categories with ten pets each some 650.
 */
const MAX_SHARED_LINKS = 2_000;

export function useCompiledExecution(options: CompiledExecutionOptions): Plugin {
  const { afterUses, windowMs, countExecution } = options;
  // Per document: yoga's document cache hands every request with the same text the same DocumentNode,
  // so these go with the document when that cache lets it go.
  const uses = new WeakMap<DocumentNode, Uses>();
  const graphqlJsOnly = new WeakMap<DocumentNode, boolean>();
  const paths = { links: 0 };
  const compiled = boundedCache<DocumentNode, Compiled>(
    'graphql_compiled',
    { maxEntries: options.maxEntries, maxBytes: options.maxBytes },
    options.caches,
    {
      sizeOf: (entry) => entry.bytes,
      onDispose: (entry, _document, reason) => {
        // Set again with another operation of the same document: the same entry, kept.
        if (reason === 'set') return;
        for (const operation of entry.operations.values()) if (operation !== 'not compilable') paths.links -= operation.paths.links;
      },
    },
  );
  options.caches?.watch('graphql_path_links', {
    bounds: { maxEntries: options.maxEntries * MAX_SHARED_LINKS },
    entries: () => paths.links,
  });

  // Queries only: jit's executor takes no abort signal, so a mutation could not be stopped at the
  // request's deadline (useRequestDeadline), and a subscription's events are few.
  // Introspection, rare and answered by graphql-js' own resolvers, is left to graphql-js too, and so
  // are documents with @defer or @stream.
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

  /** Whether the document has now run often enough within the window to be worth compiling. */
  const earned = (document: DocumentNode) => {
    const now = Date.now();
    let seen = uses.get(document);
    if (!seen || now - seen.since > windowMs) {
      seen = { count: 0, since: now };
      uses.set(document, seen);
    }
    seen.count++;
    return seen.count >= afterUses;
  };

  const compiledOperation = (args: Parameters<ExecuteFunction>[0]) => {
    const key = args.operationName ?? '';
    let entry = compiled.get(args.document);
    let operation = entry?.operations.get(key);
    if (operation) return operation === 'not compilable' ? undefined : operation;
    if (!earned(args.document)) return undefined;
    // Not jit's customJSONSerializer: with it, errors lost their path and DateTime values failed
    // (the suite, run compiled, showed both).
    // `debug` only keeps the generated source on the result (V8 keeps it anyway), which tells its size.
    const result = compileQuery(args.schema, args.document, args.operationName ?? undefined, { debug: true } as Parameters<typeof compileQuery>[3]);
    operation = isCompiledQuery(result) ? { query: result, paths: createPathTree(MAX_SHARED_LINKS, paths) } : 'not compilable';
    entry ??= { operations: new Map(), bytes: 0 };
    entry.operations.set(key, operation);
    if (operation !== 'not compilable') entry.bytes += generatedSource(operation.query).length;
    // Set again, so the cache counts the entry's new size.
    compiled.set(args.document, entry);
    return operation === 'not compilable' ? undefined : operation;
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = compilable(args.document, args.operationName) ? compiledOperation(args) : undefined;
      if (!operation) {
        countExecution?.('graphql-js');
        return;
      }
      const graphqlJs = executeFn;
      setExecuteFn((executeArgs) => {
        (executeArgs.contextValue as Record<symbol, unknown>)[CANONICAL_PATHS] = requestPaths(operation.paths);
        return mapMaybePromise(
          operation.query.query(executeArgs.rootValue, executeArgs.contextValue, executeArgs.variableValues) as
            | ExecutionResult
            | Promise<ExecutionResult>,
          (result) => {
            if (isAsyncIterable(result) || 'data' in result) {
              countExecution?.('compiled');
              return result;
            }
            // A request that fails before execution (its variables do not fit their types) gets no
            // `data`; graphql-js words those errors better (jit's messages have no "Did you mean"),
            // and nothing has run yet, so graphql-js answers it.
            countExecution?.('graphql-js');
            delete (executeArgs.contextValue as Record<symbol, unknown>)[CANONICAL_PATHS];
            return graphqlJs(executeArgs);
          },
        );
      });
    },
  };
}
