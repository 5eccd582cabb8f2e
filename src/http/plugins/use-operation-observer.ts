import type { ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { metricsClient } from '../../auth/scopes.js';
import type { GraphQLContext } from '../../builder.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RequestContext } from '../types.js';
import { operationFacts } from './operation-facts.js';

/**
 * Names the operation for the request log and metrics, and counts the use of
 * deprecated fields per client, so the sunset can be planned from facts.
 */
export function useOperationObserver(metrics: Metrics): Plugin<GraphQLContext & RequestContext> {
  const observe = ({ args }: { args: ExecutionArgs }) => {
    const context = args.contextValue as GraphQLContext & RequestContext;
    const facts = operationFacts(args.schema, args.document, args.operationName);
    if (context.trace) context.trace.operation = facts.name;
    if (facts.deprecated.length === 0) return;
    const client = metricsClient(context.principal);
    for (const { field, uses } of facts.deprecated) metrics.deprecatedUse.inc({ target: field, client }, uses);
  };
  return { onExecute: observe, onSubscribe: observe };
}
