import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Validation results kept per parsed document. Yoga's document cache hands every request of one text
 * the same document (and lets it go with its entry), so a document's validation is kept as long as
 * the document is. Yoga's own validation cache keys its results by the names of every rule as well,
 * joined anew on every request; and every plugin that adds rules did so on every request, to no use
 * once the result is kept: those are asked on a document's first validation only (`firstOnly`).
 */
export interface ValidationCache {
  /** Keeps and gives validation results; registered after every plugin that changes them (useErrorMasking). */
  plugin: Plugin;
  /** The same plugin, whose `onValidate` (adding rules) runs only when the document is validated. */
  firstOnly<P extends { onValidate?: unknown }>(plugin: P): P;
}

export function createValidationCache(): ValidationCache {
  const results = new WeakMap<DocumentNode, ReadonlyArray<GraphQLError | Error>>();
  return {
    plugin: {
      onValidate({ params, setResult }) {
        const kept = results.get(params.documentAST);
        if (kept) {
          setResult(kept as GraphQLError[]);
          return;
        }
        return ({ result }) => {
          results.set(params.documentAST, result);
        };
      },
    },
    firstOnly(plugin) {
      const onValidate = plugin.onValidate as ((payload: { params: { documentAST: DocumentNode } }) => unknown) | undefined;
      if (!onValidate) return plugin;
      return { ...plugin, onValidate: (payload: { params: { documentAST: DocumentNode } }) => (results.has(payload.params.documentAST) ? undefined : onValidate(payload)) };
    },
  };
}
