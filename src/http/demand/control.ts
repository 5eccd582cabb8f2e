import { mapMaybePromise, type MaybePromise } from '@graphql-tools/utils';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { CacheBounds } from '../../config.js';
import type { CacheMetrics } from '../../observability/caches.js';
import type { DemandNote } from '../types.js';
import { type CostAnalysis, costLimitExceeded, createCostAnalysis } from './analysis.js';
import { type CostBudget, throttled } from './budget.js';

type Variables = Readonly<Record<string, unknown>>;

/** What every GraphQL answer carries in `extensions.cost` (docs/api.md, "What a request costs"). */
export interface CostExtension {
  /** The static analysis' cost, before execution: what was reserved of the budget. */
  estimated: number;
  /** The cost of what the answer holds, counted after execution: what was spent. */
  actual: number;
  /** The points left of the client's budget after this request; absent when no budget applies. */
  budgetLeft?: number;
}

/** An operation let through: what it reserved, of whose budget. */
export interface Admission {
  estimated: number;
  note?: DemandNote;
  /** Points left just after the reservation. */
  remaining?: number;
}

/**
 * Demand control, the one place every GraphQL path (yoga's plugin, the query plans, WebSocket)
 * asks: the estimate within MAX_COST, the budget's reservation, and the spending of the actual cost.
 */
export interface DemandControl {
  readonly maxCost: number;
  readonly budget: CostBudget;
  readonly analysis: CostAnalysis;
  /** The estimate; VALIDATION_FAILED or COST_LIMIT_EXCEEDED (both before anything runs). */
  estimate(document: DocumentNode, operationName: string | null | undefined, variables: Variables): number;
  /**
   * Reserves the estimate of the client's budget (none without a note); THROTTLED when it does not
   * hold it. Synchronous when the budgets are kept in process (CostBudget).
   */
  admit(note: DemandNote | undefined, estimated: number): MaybePromise<Admission>;
  /** Spends the actual cost (gives back the rest of the reservation) and says what the answer carries. */
  settle(admission: Admission, actual: number): MaybePromise<CostExtension>;
}

export function createDemandControl(options: {
  schema: GraphQLSchema;
  maxCost: number;
  budget: CostBudget;
  /** The length of a list without `@listSize`. */
  unsizedList: number;
  bounds: CacheBounds;
  caches?: CacheMetrics;
}): DemandControl {
  const { maxCost, budget } = options;
  const analysis = createCostAnalysis(options.schema, { unsizedList: options.unsizedList, bounds: options.bounds, caches: options.caches });
  return {
    maxCost,
    budget,
    analysis,
    estimate(document, operationName, variables) {
      const estimated = analysis.estimate(document, operationName, variables);
      if (estimated > maxCost) throw costLimitExceeded(estimated, maxCost);
      return estimated;
    },
    admit(note, estimated) {
      if (!note) return { estimated };
      return mapMaybePromise(budget.take(note.client, estimated), (taken): Admission => {
        note.budget = taken;
        if (!taken.taken) throw throttled(taken, estimated, budget.settings);
        return { estimated, note, remaining: taken.remaining };
      });
    },
    settle(admission, actual) {
      const { estimated, note } = admission;
      if (!note) return { estimated, actual };
      const answer = (): CostExtension => ({ estimated, actual, budgetLeft: note.budget!.remaining });
      if (actual === estimated) return answer();
      let adjusted;
      try {
        adjusted = budget.adjust(note.client, actual - estimated);
      } catch {
        return answer();
      }
      return mapMaybePromise(
        adjusted,
        (state) => {
          note.budget = state;
          return answer();
        },
        // Redis away with COST_BUDGET_ON_REDIS_FAILURE=refuse: the reservation stands, never less.
        () => answer(),
      );
    },
  };
}
