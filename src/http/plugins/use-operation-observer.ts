import { type DocumentNode, type ExecutionArgs, type GraphQLSchema, getOperationAST, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { metricsClient } from '../../auth/scopes.js';
import type { GraphQLContext } from '../../builder.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RequestContext } from '../types.js';

interface ObservedOperation {
  /** The operation's name, else its kind, else anonymous. */
  name: string;
  /** `Type.field` for each use of a deprecated field, as often as it is used. */
  deprecated: string[];
}

/**
 * Names the operation for the request log and metrics, and counts the use of
 * deprecated fields per client, so the sunset can be planned from facts.
 */
export function useOperationObserver(metrics: Metrics): Plugin<GraphQLContext & RequestContext> {
  // What a document tells, worked out once per document and operation name: yoga's parse
  // cache hands every request with the same text the same DocumentNode.
  const seen = new WeakMap<DocumentNode, Map<string, ObservedOperation>>();
  const observeDocument = (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined) => {
    let byName = seen.get(document);
    if (!byName) {
      byName = new Map();
      seen.set(document, byName);
    }
    let observed = byName.get(operationName ?? '');
    if (!observed) {
      const operation = getOperationAST(document, operationName);
      const deprecated: string[] = [];
      const typeInfo = new TypeInfo(schema);
      visit(
        document,
        visitWithTypeInfo(typeInfo, {
          Field() {
            const field = typeInfo.getFieldDef();
            const parent = typeInfo.getParentType();
            if (field?.deprecationReason && parent) deprecated.push(`${parent.name}.${field.name}`);
          },
        }),
      );
      observed = { name: operation?.name?.value ?? operation?.operation ?? 'anonymous', deprecated };
      byName.set(operationName ?? '', observed);
    }
    return observed;
  };
  const observe = ({ args }: { args: ExecutionArgs }) => {
    const context = args.contextValue as GraphQLContext & RequestContext;
    const observed = observeDocument(args.schema, args.document, args.operationName ?? undefined);
    if (context.trace) context.trace.operation = observed.name;
    if (observed.deprecated.length === 0) return;
    const client = metricsClient(context.principal);
    for (const target of observed.deprecated) metrics.deprecatedUse.inc({ target, client });
  };
  return { onExecute: observe, onSubscribe: observe };
}
