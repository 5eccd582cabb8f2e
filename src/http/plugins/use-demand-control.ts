import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { DomainError } from '../../errors.js';
import type { DemandControl } from '../demand/control.js';
import type { RequestContext } from '../types.js';

type Variables = Readonly<Record<string, unknown>>;

/** A refusal before anything runs, classified by useErrorMasking (its code, numbers, status and Retry-After). */
const refused = (error: DomainError) => [new GraphQLError(error.message, { originalError: error })];

/**
 * Demand control on yoga's path (the query plans do the same in src/http/query-plans/serve.ts):
 * once the document is valid and its variables known, its estimated cost must be within MAX_COST
 * and the client's budget must hold it (it is reserved); once it has run, the actual cost of what
 * it returned is spent and the answer carries `extensions.cost`. A subscription spends its
 * estimate when it subscribes, not per event; an incremental (`@defer`/`@stream`) answer spends
 * its estimate.
 */
export function useDemandControl(demand: DemandControl): Plugin<object, RequestContext> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const note = (args.contextValue as Partial<RequestContext>).demand;
      const variables = (args.variableValues ?? {}) as Variables;
      let admission;
      try {
        admission = await demand.admit(note, demand.estimate(args.document, args.operationName, variables));
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        setResultAndStopExecution({ errors: refused(error) });
        return undefined;
      }
      return {
        async onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) return;
          const actual = demand.analysis.actual(args.document, args.operationName, variables, result.data);
          const cost = await demand.settle(admission, actual);
          setResult({ ...result, extensions: { ...result.extensions, cost } });
        },
      };
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const note = (args.contextValue as Partial<RequestContext>).demand;
      try {
        await demand.admit(note, demand.estimate(args.document, args.operationName, (args.variableValues ?? {}) as Variables));
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        setResultAndStopExecution({ errors: refused(error) });
      }
    },
  };
}
