import type { Plugin } from 'graphql-yoga';
import type { QueryPlans } from './plans.js';

/**
 * Remembers every query document yoga runs, by its text, for its plan (plans.ts): the document
 * has been parsed, and validated against the schema and every limit, by the time it executes. A
 * document run by id (trusted documents, persisted queries) is remembered by the text it stands for.
 */
export function useQueryPlans(plans: QueryPlans): Plugin {
  return {
    onExecute({ args }) {
      const params = (args.contextValue as { params?: { query?: unknown } }).params;
      if (typeof params?.query === 'string') plans.remember(params.query, args.operationName, args.document);
    },
  };
}
