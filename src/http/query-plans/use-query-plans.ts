import { locatedError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../types.js';
import type { QueryPlans } from './plans.js';

/**
 * Remembers every document yoga runs, by its text, for its plan (plans.ts): the document has been
 * parsed, and validated against the schema and every limit, by the time it executes. A document
 * run by id (trusted documents, persisted queries) is remembered by the text it stands for.
 *
 * And answers a planned write that failed once it had begun (serve.ts) from its outcome, in place
 * of executing it again: its error where graphql-js would have put it, at the write's field (a
 * non-null one takes `data` with it). Registered after every plugin whose execution hooks a
 * mutation needs (limits, cost, write tags, read routing): they see this result as if executed,
 * and useErrorMasking gives the error its documented shape.
 */
export function useQueryPlans(plans: QueryPlans): Plugin<object, RequestContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as Partial<RequestContext> & { params?: { query?: unknown } };
      const settled = context.settledWrite;
      if (settled) {
        setResultAndStopExecution({
          data: settled.nullable ? { [settled.key]: null } : null,
          errors: [locatedError(settled.error, settled.nodes, [settled.key])],
        });
        return;
      }
      const params = context.params;
      if (typeof params?.query === 'string') plans.remember(params.query, args.operationName, args.document);
    },
  };
}
