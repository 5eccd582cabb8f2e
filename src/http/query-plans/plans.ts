import {
  type DocumentNode,
  getOperationAST,
  getVariableValues,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import type { CacheBounds } from '../../config.js';
import type { PrismaClient } from '../../database/client.js';
import type { DomainEvent } from '../../domain/events.js';
import type { Lookups } from '../../domain/lookups.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { findRoundedId } from '../plugins/use-rounded-id-refusal.js';
import { conditionVariables } from '../demand/analysis.js';
import type { CostExtension, DemandControl } from '../demand/control.js';
import type { DemandNote, SettledWrite } from '../types.js';
import type { WriteContext } from '../../schema/plans.js';
import { DomainError } from '../../errors.js';
import { compilePlan, NoPlan, type Plan } from './compile.js';
import { executePlan, WriteFailed } from './execute.js';

/**
 * The query plans of the documents the gateway has run (src/http/query-plans/compile.ts): a
 * document yoga has parsed, validated against every limit and run once is remembered by its text,
 * so the next request with the same text is answered by its plan, with no parsing, validation or
 * field-by-field execution. Bounded like every per-document cache (entries and bytes), reported as
 * `graphql_plans`.
 */
export interface QueryPlans {
  /** Remembers a document yoga ran for `text` (called by the yoga plugin, after validation). */
  remember(text: string, operationName: string | null | undefined, document: DocumentNode): void;
  /**
   * The answer's data for a request by its plan, or undefined when it has none or cannot answer
   * this request exactly (the request then runs field by field, which answers it as it should).
   */
  run(request: PlanInputs): Promise<PlanOutcome | undefined>;
}

/** What a plan made of a request: its answer's data, or a write that failed once it had begun. */
export type PlanOutcome =
  | {
      kind: 'answered';
      data: Record<string, unknown>;
      document: DocumentNode;
      operationName: string | undefined;
      cost: CostExtension;
      /** The variables as coerced (a write's changes are read from them). */
      variables: Record<string, unknown>;
      /** A mutation's: the write committed, and these are the events it published. */
      published?: DomainEvent[];
    }
  | { kind: 'write failed'; failed: FailedWrite };

/** A planned write's failure, for yoga to answer as graphql-js would have (use-query-plans.ts), and what it changed. */
export interface FailedWrite extends SettledWrite {
  document: DocumentNode;
  variables: Record<string, unknown>;
  /** The events it published before it failed (none, for a refusal). */
  published: DomainEvent[];
}

export interface PlanInputs {
  text: string;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  scopes: ReadonlySet<string>;
  prisma: PrismaClient;
  lookups: Lookups;
  /** Whose budget the request spends; none (the tests' verification) spends nothing. */
  demand?: DemandNote;
  /** What a mutation's write runs on (the primary's client, the event bus); without it a mutation has no plan. */
  write?: WriteContext;
}

interface Remembered {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The variables `@include`/`@skip` read: a plan per set of their values. */
  conditions: readonly string[];
  plans: Map<string, Plan | NoPlan>;
}

/** A plan is a few kilobytes of closures; the document text stands for its size. */
const BYTES_PER_CHARACTER = 40;

export function createQueryPlans(options: {
  schema: GraphQLSchema;
  /** The cost limit and budgets, as yoga's plugin applies them. */
  demand: DemandControl;
  bounds: CacheBounds;
  /** Read lists with statements of the gateway's own where they cover the read (GRAPHQL_PLAN_STATEMENTS). */
  ownStatements: boolean;
  caches?: CacheMetrics;
  /** Counts each request a plan answered, and each it could not. */
  count?: (outcome: 'planned' | 'unplanned') => void;
}): QueryPlans {
  const { schema, demand } = options;
  const remembered = boundedCache<string, Remembered>('graphql_plans', options.bounds, options.caches, {
    sizeOf: (_entry, key) => key.length * BYTES_PER_CHARACTER,
    onDispose: (entry) => demand.analysis.forget(entry.document),
  });
  const keyOf = (text: string, operationName: string | null | undefined) => `${operationName ?? ''}\n${text}`;
  const unplanned = () => {
    options.count?.('unplanned');
    return undefined;
  };

  return {
    remember(text, operationName, document) {
      const key = keyOf(text, operationName);
      if (remembered.has(key)) return;
      const operation = getOperationAST(document, operationName);
      if (!operation || operation.operation === 'subscription') return;
      // A mutation is kept only if it may have a plan: other writes would take the places of query plans.
      if (operation.operation === 'mutation' && !writesPlannably(schema, operation)) return;
      remembered.set(key, { document, operation, conditions: conditionVariables(document), plans: new Map() });
    },

    async run({ text, operationName, variables, scopes, prisma, lookups, demand: note, write }) {
      const entry = remembered.get(keyOf(text, operationName));
      if (!entry) return undefined;
      const { document, operation } = entry;
      if (operation.operation === 'mutation' && !write) return undefined;
      // As yoga's checks of the request's variables, before anything runs: anything off is theirs to word.
      const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
      if (coerced.errors) return unplanned();
      if (findRoundedId(schema, document, operationName, variables)) return unplanned();
      const conditionKey = JSON.stringify(entry.conditions.map((name) => coerced.coerced[name]));
      let plan = entry.plans.get(conditionKey);
      if (!plan) {
        try {
          plan = compilePlan(schema, document, operationName, coerced.coerced);
        } catch (error) {
          if (!(error instanceof NoPlan)) throw error;
          plan = error;
        }
        entry.plans.set(conditionKey, plan);
      }
      if (plan instanceof NoPlan) return undefined;
      for (const scope of plan.scopes) if (!scopes.has(scope)) return unplanned();
      // The estimate over MAX_COST, a bad slicing argument, a budget that does not hold it: yoga's
      // plugin refuses it again, in its documented shape (a refused reservation spent nothing).
      let admission;
      try {
        admission = await demand.admit(note, demand.estimate(document, operationName, coerced.coerced));
      } catch (error) {
        if (error instanceof DomainError) return unplanned();
        throw error;
      }
      // A write's events go to the bus as they come, and are kept to tell the write listeners what it changed.
      const published: DomainEvent[] | undefined = write && operation.operation === 'mutation' ? [] : undefined;
      const recording = write && published && {
        prisma: write.prisma,
        events: {
          publish(event: DomainEvent) {
            published.push(event);
            write.events.publish(event);
          },
        },
      };
      let data;
      try {
        data = await executePlan(plan, {
          prisma,
          lookups,
          variables: coerced.coerced,
          ownStatements: options.ownStatements,
          ...(recording ? { write: recording } : {}),
        });
      } catch (error) {
        // A bad argument, an error of the database, a null where none may be: the field-by-field
        // run answers it, with the error in its documented shape, and reserves again. A write that
        // had begun is not run again: yoga answers its outcome.
        await demand.settle(admission, 0);
        if (error instanceof WriteFailed) {
          options.count?.('planned');
          const [root] = plan.fields as [Extract<Plan['fields'][number], { kind: 'write' }>];
          return { kind: 'write failed', failed: { error: error.cause, document, variables: coerced.coerced, published: published ?? [], key: root.key, nodes: root.nodes, nullable: root.nullable } };
        }
        return unplanned();
      }
      options.count?.('planned');
      const cost = await demand.settle(admission, demand.analysis.actual(document, operationName, coerced.coerced, data));
      return { kind: 'answered', data, document, operationName: operation.name?.value, cost, variables: coerced.coerced, ...(published ? { published } : {}) };
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
