import { type ExecutionResult as AnswerPart, isPromise, mapMaybePromise, mergeIncrementalResult } from '@graphql-tools/utils';
import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { DomainError } from '../../errors.js';
import type { Admission, DemandControl } from '../demand/control.js';
import type { RequestContext } from '../types.js';

type Variables = Readonly<Record<string, unknown>>;

/** A refusal before anything runs, classified by useErrorMasking (its code, numbers, status and Retry-After). */
const refused = (error: DomainError) => [new GraphQLError(error.message, { originalError: error })];

/**
 * Demand control, whichever engine executes the operation: once the document is valid and its variables known, its estimated cost must be within MAX_COST
 * and the client's budget must hold it (it is reserved); once it has run, the actual cost of what
 * it returned is spent and the answer carries `extensions.cost`. A subscription spends its
 * estimate when it subscribes, not per event; an incremental (`@defer`/`@stream`) answer spends the
 * actual cost of all its parts, told in its last part's `extensions.cost` (a stream the client
 * leaves before its end keeps its estimate spent).
 */
export function useDemandControl(demand: DemandControl): Plugin<object, RequestContext> {
  return {
    // Not async: with budgets in process nothing waits, and the answer leaves the execution at once.
    onExecute({ args, setResultAndStopExecution }) {
      const note = (args.contextValue as Partial<RequestContext>).demand;
      const variables = (args.variableValues ?? {}) as Variables;
      const refuse = (error: unknown) => {
        if (!(error instanceof DomainError)) throw error;
        setResultAndStopExecution({ errors: refused(error) });
        return undefined;
      };
      const settling = (admission: Admission) => ({
        onExecuteDone({ result, setResult }: { result: unknown; setResult: (result: never) => void }) {
          const settle = (executed: ExecutionResult, data: ExecutionResult['data'], replace: (result: never) => void) => {
            const actual = demand.analysis.actual(args.document, args.operationName, variables, data);
            return mapMaybePromise(demand.settle(admission, actual), (cost) => {
              replace({ ...executed, extensions: { ...executed.extensions, cost } } as never);
            });
          };
          if (!isAsyncIterable(result)) return settle(result as ExecutionResult, (result as ExecutionResult).data, setResult);
          // Parts of an incremental answer carry hasNext; a live query's runs do not, and are paid for by useLiveQueries.
          // The parts put together as a client does; each is copied, as it is the client's.
          const whole: AnswerPart = {};
          return {
            onNext({ result: part, setResult: setPart }: { result: ExecutionResult; setResult: (result: ExecutionResult) => void }) {
              const { hasNext } = part as AnswerPart;
              if (hasNext === undefined) return undefined;
              mergeIncrementalResult({ incrementalResult: structuredClone(part) as AnswerPart, executionResult: whole });
              return hasNext ? undefined : settle(part, whole.data as ExecutionResult['data'], setPart as (result: never) => void);
            },
          };
        },
      });
      let admitted;
      try {
        admitted = demand.admit(note, demand.estimate(args.document, args.operationName, variables));
      } catch (error) {
        return refuse(error);
      }
      return isPromise(admitted) ? admitted.then(settling, refuse) : settling(admitted);
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
