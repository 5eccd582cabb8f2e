import {
  type ASTNode,
  BREAK,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  getOperationAST,
  Kind,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * graphql-armor's cost limit reads page sizes (`first`, `last`) only when
 * they are written in the document: `pets(first: 100)` costs a hundred times
 * its selection, `pets(first: $n)` once, whatever `$n` is. Validation cannot
 * know the variables, so a client could ask for 100 × 100 × 100 rows at the
 * price of one. This check runs again once the variables are known, before
 * execution, with armor's own formula (its default weights, which the
 * gateway uses) and the variables' page sizes, and refuses the same way.
 */

// graphql-armor's defaults (useQueryLimits leaves them as they are).
const OBJECT_COST = 2;
const SCALAR_COST = 1;
const DEPTH_COST_FACTOR = 1.5;

type Variables = Readonly<Record<string, unknown>>;

const pageArguments = new Set(['first', 'last']);

// Per document: yoga's parse cache hands every request with the same text the same DocumentNode.
const variablePageSizes = new WeakMap<DocumentNode, boolean>();

/** Whether any `first` or `last` of `document` is given by a variable. Walked once per document. */
export function hasVariablePageSize(document: DocumentNode): boolean {
  let found = variablePageSizes.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Argument(node) {
        if (pageArguments.has(node.name.value) && node.value.kind === Kind.VARIABLE) {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    });
    variablePageSizes.set(document, found);
  }
  return found;
}

/** The cost of the operation as graphql-armor computes it, with page sizes taken from `variables` too. */
export function operationCost(document: DocumentNode, operationName: string | null | undefined, variables: Variables) {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const visited = new Map<string, number>();

  const pageSize = (node: ASTNode): number => {
    if (node.kind !== Kind.FIELD) return 1;
    const argument = node.arguments?.find((candidate) => pageArguments.has(candidate.name.value));
    if (!argument) return 1;
    const value =
      argument.value.kind === Kind.INT
        ? Number.parseInt(argument.value.value, 10)
        : argument.value.kind === Kind.VARIABLE
          ? variables[argument.value.name.value]
          : undefined;
    return typeof value === 'number' && Number.isInteger(value) ? Math.max(value, 1) : 1;
  };

  const cost = (node: ASTNode): number => {
    if (node.kind === Kind.FIELD && node.name.value === '__schema') return 0;
    if ('selectionSet' in node && node.selectionSet) {
      let total = OBJECT_COST;
      for (const child of node.selectionSet.selections) total += DEPTH_COST_FACTOR * cost(child);
      return total * pageSize(node);
    }
    if (node.kind === Kind.FRAGMENT_SPREAD) {
      const name = node.name.value;
      if (visited.has(name)) return SCALAR_COST + DEPTH_COST_FACTOR * Math.max(visited.get(name)!, 0);
      visited.set(name, -1);
      const fragment = fragments.get(name);
      if (!fragment) return SCALAR_COST;
      const fragmentCost = cost(fragment);
      visited.set(name, fragmentCost);
      return SCALAR_COST + DEPTH_COST_FACTOR * fragmentCost;
    }
    return SCALAR_COST;
  };

  return operation.selectionSet.selections.reduce((total, selection) => total + cost(selection), 0);
}

/** Refuses, before execution, an operation whose variables' page sizes take it over `maxCost`. */
export function useVariablePageCost(maxCost: number): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (!hasVariablePageSize(args.document)) return;
      const found = operationCost(args.document, args.operationName, args.variableValues ?? {});
      if (found <= maxCost) return;
      // Worded as armor words it, so the answer is the same VALIDATION_FAILED naming MAX_COST.
      setResultAndStopExecution({
        errors: [new GraphQLError(`Query Cost limit of ${maxCost} exceeded, found ${found}.`)],
      });
    },
  };
}
