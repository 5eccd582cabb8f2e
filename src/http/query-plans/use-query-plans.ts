import { type ExecutionArgs, type ExecutionResult, locatedError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { withoutStackTrace } from '../../errors.js';
import { inSpan } from '../../observability/tracing/spans.js';
import type { PlanOutcome, QueryPlans } from './plans.js';

export type Engine = 'plan' | 'graphql-js';

/**
 * Query plans as yoga's executor (plans.ts; off when `plans` is undefined, GRAPHQL_QUERY_PLANS=false),
 * counted by engine: an operation that may have a plan is executed by it,
 * and by graphql-js (the executor yoga chose) whenever the plan has none for the request or cannot
 * answer it exactly. Nothing else is decided here: every other plugin acts on the execution around
 * whichever engine runs it, so a rule added to the pipeline holds for both.
 *
 * A planned write that failed once it had begun is answered from its outcome, never run again: its
 * error where graphql-js would have put it, at the write's root field (a non-null one takes `data`
 * with it), for useErrorMasking to give it its documented shape.
 */
export function useQueryPlans(plans: QueryPlans | undefined, options: { countExecution?: (engine: Engine) => void; traced?: boolean } = {}): Plugin {
  const count = options.countExecution ?? (() => {});
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const planned = plans?.lookup(args.document, args.operationName, args.schema);
      if (!plans || !planned) {
        count('graphql-js');
        return;
      }
      const graphqlJs = executeFn as (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult;
      setExecuteFn(async (executeArgs) => {
        // Answered at its time limit already: graphql-js, given the aborted signal, starts nothing and says so.
        const aborted = (executeArgs as { signal?: AbortSignal }).signal?.aborted;
        const outcome = aborted ? undefined : await plans.run(planned, executeArgs, options.traced ? tracedPlan : undefined);
        if (!outcome) {
          count('graphql-js');
          return graphqlJs(executeArgs);
        }
        count('plan');
        return resultOf(outcome);
      });
    },
  };
}

/** The plan's reads and writes in a span of their own, beneath graphql.execute: which engine answered, in the trace. */
const tracedPlan = <T>(work: () => Promise<T>) => inSpan('graphql.plan', work);

function resultOf(outcome: PlanOutcome): ExecutionResult {
  if (outcome.kind === 'answered') return { data: outcome.data };
  return {
    data: outcome.nullable ? { [outcome.key]: null } : null,
    // The error it wraps keeps its own stack (graphql-js copies it); one of its own would show graphql-js' frames.
    errors: [withoutStackTrace(() => locatedError(outcome.error, outcome.nodes, [outcome.key]))],
  };
}
