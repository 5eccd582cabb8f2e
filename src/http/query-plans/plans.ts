import {
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  getOperationAST,
  getVariableValues,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import type { GraphQLContext } from '../../builder.js';
import type { CacheBounds } from '../../config.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { conditionVariables } from '../demand/analysis.js';
import { compilePlan, NoPlan, type Plan } from './compile.js';
import { executePlan, WriteFailed } from './execute.js';
import { passesRules } from './schema-facts.js';

/**
 * The query plans of the documents the gateway runs (compile.ts): worked out when a document first
 * executes (by then yoga has parsed it and checked it against the schema and every limit), and kept
 * per parsed document, which yoga's document cache hands every request of the same text. Bounded like
 * every per-document cache (entries and bytes), reported as `graphql_plans`.
 *
 * A plan is only an executor: yoga's pipeline has done everything else by the time it runs (the body,
 * authentication, limits, the cost, the response cache's note, read routing, the write notices, the
 * error shape), and does it the same for graphql-js.
 */
export interface QueryPlans {
  /**
   * The operation's entry when it may have a plan: a query, or a mutation that selects a write the
   * schema declares plannable; undefined for anything else (subscriptions, other writes).
   */
  lookup(document: DocumentNode, operationName: string | null | undefined, schema: GraphQLSchema): PlannedOperation | undefined;
  /**
   * The plan's outcome for one execution, or undefined when it has none for this request or cannot
   * answer it exactly (its variables do not fit, a rule is not passed, a read failed): graphql-js
   * then answers it, as it should.
   */
  run(operation: PlannedOperation, args: ExecutionArgs, around?: Around): Promise<PlanOutcome | undefined>;
}

/** What a plan made of an execution: its answer's data, or a write that failed once it had begun. */
export type PlanOutcome =
  | { kind: 'answered'; data: Record<string, unknown> }
  | {
      kind: 'write failed';
      /** What the write threw, for the error module to word. */
      error: unknown;
      /** The root field it answers for, where graphql-js would put its error. */
      key: string;
      nodes: readonly FieldNode[];
      nullable: boolean;
    };

/** Runs a plan's reads and writes once it is known to answer (a trace's span around them). */
export type Around = <T>(work: () => Promise<T>) => Promise<T>;

export interface PlannedOperation {
  operation: OperationDefinitionNode;
  /** The variables `@include`/`@skip` read: a plan per set of their values. */
  conditions: readonly string[];
  plans: Map<string, Plan | NoPlan>;
}

/** A plan is a few kilobytes of closures; the document's text stands for its size. */
const BYTES_PER_CHARACTER = 40;

export function createQueryPlans(options: {
  bounds: CacheBounds;
  /** Read lists with statements of the gateway's own where they cover the read (GRAPHQL_PLAN_STATEMENTS). */
  ownStatements: boolean;
  caches?: CacheMetrics;
}): QueryPlans {
  const kept = boundedCache<DocumentNode, Map<string, PlannedOperation>>('graphql_plans', options.bounds, options.caches, {
    sizeOf: (_operations, document) => (document.loc?.source.body.length ?? 1_000) * BYTES_PER_CHARACTER,
  });

  return {
    lookup(document, operationName, schema) {
      const key = operationName ?? '';
      const operations = kept.get(document);
      const found = operations?.get(key);
      if (found) return found;
      const operation = getOperationAST(document, operationName);
      if (!operation || operation.operation === 'subscription') return undefined;
      // A mutation is kept only if it may have a plan: other writes would take the places of query plans.
      if (operation.operation === 'mutation' && !writesPlannably(schema, operation)) return undefined;
      const planned: PlannedOperation = { operation, conditions: conditionVariables(document), plans: new Map() };
      if (operations) operations.set(key, planned);
      else kept.set(document, new Map([[key, planned]]));
      return planned;
    },

    async run(planned, args, around = (work) => work()) {
      const { operation } = planned;
      const context = args.contextValue as GraphQLContext;
      // As graphql-js coerces them; a variable that does not fit is graphql-js' to word.
      const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
      if (coerced.errors) return undefined;
      const conditionKey = JSON.stringify(planned.conditions.map((name) => coerced.coerced[name]));
      let plan = planned.plans.get(conditionKey);
      if (!plan) {
        try {
          plan = compilePlan(args.schema, args.document, args.operationName, coerced.coerced);
        } catch (error) {
          if (!(error instanceof NoPlan)) throw error;
          plan = error;
        }
        planned.plans.set(conditionKey, plan);
      }
      if (plan instanceof NoPlan) return undefined;
      const passed = passesRules(context, plan.rules);
      if (passed !== true && !(await passed)) return undefined;
      const writes = operation.operation === 'mutation';
      try {
        const data = await around(() =>
          executePlan(plan, {
            prisma: context.prisma,
            lookups: context.lookups,
            principal: context.principal,
            schema: args.schema,
            variables: coerced.coerced,
            ownStatements: options.ownStatements,
            // The context's publisher: yoga's write notices (useWriteTags) hear what the write published.
            ...(writes ? { write: { prisma: context.prisma, events: context.events } } : {}),
          }),
        );
        return { kind: 'answered', data };
      } catch (error) {
        // A write that had begun is not run again: its outcome is the answer.
        if (error instanceof WriteFailed) {
          const [root] = plan.fields as [Extract<Plan['fields'][number], { kind: 'write' }>];
          return { kind: 'write failed', error: error.cause, key: root.key, nodes: root.nodes, nullable: root.nullable };
        }
        // A bad argument, an error of the database, a null where none may be: graphql-js answers it,
        // with the error in its documented shape.
        return undefined;
      }
    },
  };
}

/** Whether a mutation selects a field declared plannable at its root (compile.ts decides the rest). */
function writesPlannably(schema: GraphQLSchema, operation: OperationDefinitionNode): boolean {
  const fields = schema.getMutationType()?.getFields() ?? {};
  return operation.selectionSet.selections.some(
    (selection) => selection.kind === Kind.FIELD && fields[selection.name.value]?.extensions.plannedWrite !== undefined,
  );
}
