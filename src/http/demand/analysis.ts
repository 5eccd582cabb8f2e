import { getDirective } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  getNamedType,
  getNullableType,
  type GraphQLSchema,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromASTUntyped,
  visit,
} from 'graphql';
import type { CacheBounds } from '../../config.js';
import { DomainError, validationFailed } from '../../errors.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';

/*
 * The static analysis of the GraphQL Cost Directives (src/pothos-plugins/cost.ts), as IBM's specification
 * and the routers that implement it compute it:
 *
 * - a field costs its `@cost` weight, else its type's `@cost` weight, else 1 for an object (or
 *   interface, union) and 0 for a scalar or enum; each argument given with a `@cost` adds its weight;
 * - a field returning a list costs its own cost and its selection's, times the list's size: the
 *   largest of its slicing arguments given, else its `assumedSize`, else `unsizedList`;
 * - with `sizedFields`, the size is that of the named fields of the returned object (a
 *   connection's `edges` and `nodes`), not of the field itself;
 * - with `requireOneSlicingArgument` (the default), exactly one slicing argument must be given;
 * - introspection costs nothing, and fields left out by `@skip`/`@include` neither.
 *
 * The actual cost applies the same weights to what was returned: each object, list item and
 * argument that is in the answer, and nothing for what is null or absent.
 */

type Variables = Readonly<Record<string, unknown>>;

export interface CostAnalysisOptions {
  /** The length of a list whose field has no `@listSize`. */
  unsizedList: number;
  /** Bounds of the estimates kept per document, operation and variable shape (`maxEntries: 0`: none). */
  bounds: CacheBounds;
  caches?: CacheMetrics;
}

export interface CostAnalysis {
  /**
   * The estimated cost of the operation with these (coerced) variables: worked out once per
   * document, operation and the values of the variables it depends on, then read from a cache.
   * Throws VALIDATION_FAILED for a missing or superfluous slicing argument or a negative size.
   */
  estimate(document: DocumentNode, operationName: string | null | undefined, variables: Variables): number;
  /** The cost of what an answer returned (its `data`), with the same weights. */
  actual(document: DocumentNode, operationName: string | null | undefined, variables: Variables, data: unknown): number;
  /**
   * A cache that held `document` let it go: its estimates go with it. A document parsed again is a
   * new one, with estimates of its own; the old one's would only wait for the bound to push them out.
   */
  forget(document: DocumentNode): void;
}

interface ListSize {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
  requireOneSlicingArgument?: boolean;
}

interface FieldCost {
  weight: number;
  /** The weight of each argument that has one. */
  argumentWeights: ReadonlyMap<string, number>;
  list: boolean;
  listSize?: ListSize;
}

/** What a document's estimate depends on: a number of its own (the cache key), and the variables it reads. */
interface DocumentFacts {
  id: number;
  variables: string[];
  /** The keys of its estimates in the cache. */
  estimates: Set<string>;
}

interface KeptEstimate {
  cost: number;
  /** Its document's keys, which it leaves when the cache lets it go. */
  of: Set<string>;
}

const directiveOf = <T>(schema: GraphQLSchema, node: Parameters<typeof getDirective>[1], name: string) =>
  getDirective(schema, node, name)?.[0] as T | undefined;

/** The costs of every field of a schema, read from its directives once. */
function fieldCosts(schema: GraphQLSchema) {
  const costs = new WeakMap<GraphQLField<unknown, unknown>, FieldCost>();
  return (field: GraphQLField<unknown, unknown>): FieldCost => {
    let cost = costs.get(field);
    if (cost) return cost;
    const named = getNamedType(field.type);
    const typeWeight = 'astNode' in named ? directiveOf<{ weight: number }>(schema, named, 'cost')?.weight : undefined;
    const argumentWeights = new Map<string, number>();
    for (const argument of field.args) {
      const weight = directiveOf<{ weight: number }>(schema, argument, 'cost')?.weight;
      if (weight !== undefined) argumentWeights.set(argument.name, weight);
    }
    cost = {
      weight: directiveOf<{ weight: number }>(schema, field, 'cost')?.weight ?? typeWeight ?? (isCompositeType(named) ? 1 : 0),
      argumentWeights,
      list: isListType(getNullableType(field.type)),
      listSize: directiveOf<ListSize>(schema, field, 'listSize'),
    };
    costs.set(field, cost);
    return cost;
  };
}

const included = (node: FieldNode | { directives?: FieldNode['directives'] }, variables: Variables) => {
  for (const directive of node.directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const argument = directive.arguments?.find((candidate) => candidate.name.value === 'if');
    const value = argument ? valueFromASTUntyped(argument.value, variables) : undefined;
    if (name === 'skip' && value === true) return false;
    if (name === 'include' && value === false) return false;
  }
  return true;
};

const argumentValue = (node: FieldNode, name: string, variables: Variables): unknown => {
  const argument = node.arguments?.find((candidate) => candidate.name.value === name);
  return argument ? valueFromASTUntyped(argument.value as ValueNode, variables) : undefined;
};

export function createCostAnalysis(schema: GraphQLSchema, options: CostAnalysisOptions): CostAnalysis {
  const costOf = fieldCosts(schema);
  const facts = new WeakMap<DocumentNode, DocumentFacts>();
  let documents = 0;
  const estimates =
    options.bounds.maxEntries > 0
      ? boundedCache<string, KeptEstimate>('graphql_costs', options.bounds, options.caches, { onDispose: (kept, key) => kept.of.delete(key) })
      : undefined;

  // Every name a slicing argument has in the schema: the variables an estimate depends on are theirs.
  const slicingNames = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      for (const name of costOf(field as GraphQLField<unknown, unknown>).listSize?.slicingArguments ?? []) slicingNames.add(name);
    }
  }

  /** The variables of `document` that its estimate depends on: slicing arguments', `@skip`'s and `@include`'s. */
  const factsOf = (document: DocumentNode): DocumentFacts => {
    let found = facts.get(document);
    if (!found) {
      const variables = new Set<string>();
      visit(document, {
        Argument(node, _key, _parent, _path, ancestors) {
          if (node.value.kind !== Kind.VARIABLE) return;
          const owner = ancestors[ancestors.length - 1];
          const onCondition = owner && 'kind' in owner && owner.kind === Kind.DIRECTIVE && ['skip', 'include'].includes(owner.name.value);
          if (onCondition || slicingNames.has(node.name.value)) variables.add(node.value.name.value);
        },
      });
      found = { id: ++documents, variables: [...variables].sort(), estimates: new Set() };
      facts.set(document, found);
    }
    return found;
  };

  /** The list's size from its slicing arguments or assumed size; refuses what the directive forbids. */
  const sizeOf = (field: GraphQLField<unknown, unknown>, node: FieldNode, listSize: ListSize | undefined, variables: Variables): number => {
    if (!listSize) return options.unsizedList;
    const slicing = listSize.slicingArguments ?? [];
    const given: Array<[string, unknown]> = [];
    for (const name of slicing) {
      const value = argumentValue(node, name, variables);
      if (value !== undefined && value !== null) given.push([name, value]);
    }
    if (slicing.length > 0 && (listSize.requireOneSlicingArgument ?? true) && given.length !== 1) {
      throw validationFailed(
        slicing.join(', '),
        `${field.name} needs exactly one of its slicing arguments (${slicing.join(', ')}) to say how many items to return; ${given.length === 0 ? 'none was' : `${given.length} were`} given.`,
      );
    }
    let size: number | undefined;
    for (const [name, value] of given) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
        throw validationFailed(name, `${name} of ${field.name} must be a whole number of 0 or more, got ${JSON.stringify(value)}.`);
      }
      size = Math.max(size ?? 0, value);
    }
    return size ?? listSize.assumedSize ?? options.unsizedList;
  };

  const fragmentsOf = (document: DocumentNode) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    return fragments;
  };

  /** The fields a selection set selects of `type`, fragments and conditions resolved, each with the type it is on. */
  function* fieldsOf(
    selectionSet: SelectionSetNode,
    type: GraphQLCompositeType,
    fragments: Map<string, FragmentDefinitionNode>,
    variables: Variables,
    seen: Set<string> = new Set(),
  ): Generator<[FieldNode, GraphQLCompositeType]> {
    // Each fragment once per selection, as it is executed once (a fragment bomb spreading the
    // same fragment twice at every level stays linear), and never inside itself.
    for (const selection of selectionSet.selections) {
      if (!included(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        yield [selection, type];
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (on && isCompositeType(on)) yield* fieldsOf(selection.selectionSet, on, fragments, variables, seen);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seen.has(name)) continue;
        seen.add(name);
        const on = schema.getType(fragment.typeCondition.name.value);
        if (on && isCompositeType(on)) yield* fieldsOf(fragment.selectionSet, on, fragments, variables, seen);
      }
    }
  }

  const definitionOf = (type: GraphQLCompositeType, node: FieldNode) => {
    const name = node.name.value;
    if (name.startsWith('__')) return undefined;
    return 'getFields' in type ? type.getFields()[name] : undefined;
  };

  const argumentsCost = (cost: FieldCost, node: FieldNode) => {
    let total = 0;
    for (const argument of node.arguments ?? []) total += cost.argumentWeights.get(argument.name.value) ?? 0;
    return total;
  };

  const estimateSelection = (
    selectionSet: SelectionSetNode,
    type: GraphQLCompositeType,
    fragments: Map<string, FragmentDefinitionNode>,
    variables: Variables,
    sized?: { fields: readonly string[]; size: number },
  ): number => {
    let total = 0;
    for (const [node, on] of fieldsOf(selectionSet, type, fragments, variables)) {
      const field = definitionOf(on, node);
      if (!field) continue;
      const cost = costOf(field as GraphQLField<unknown, unknown>);
      const named = getNamedType(field.type);
      const sizedHere = cost.listSize?.sizedFields?.length ? cost.listSize.sizedFields : undefined;
      const size = sizedHere || !cost.list ? 1 : sized?.fields.includes(node.name.value) ? sized.size : sizeOf(field as GraphQLField<unknown, unknown>, node, cost.listSize, variables);
      const inner = sizedHere ? { fields: sizedHere, size: sizeOf(field as GraphQLField<unknown, unknown>, node, cost.listSize, variables) } : undefined;
      const children = node.selectionSet && isCompositeType(named) ? estimateSelection(node.selectionSet, named, fragments, variables, inner) : 0;
      total += size * (cost.weight + argumentsCost(cost, node) + children);
    }
    return total;
  };

  /**
   * What the actual cost counts of a selection set, worked out once per document, operation and
   * `@skip`/`@include` values: for each response key the first field that answers it, with its
   * weight and what its value's own selection counts. An answer is then costed by walking it alone.
   */
  const compileActual = (
    selectionSet: SelectionSetNode,
    type: GraphQLCompositeType,
    fragments: Map<string, FragmentDefinitionNode>,
    variables: Variables,
  ): ActualField[] => {
    const compiled: ActualField[] = [];
    const keys = new Set<string>();
    for (const [node, on] of fieldsOf(selectionSet, type, fragments, variables)) {
      const key = node.alias?.value ?? node.name.value;
      // The same response key selected twice (fragments overlapping) was answered once.
      const field = definitionOf(on, node);
      if (!field || keys.has(key)) continue;
      // Of an abstract type, a fragment on another concrete type than the object's did not apply.
      if (!isObjectType(on) && !isObjectType(type)) continue;
      keys.add(key);
      const cost = costOf(field as GraphQLField<unknown, unknown>);
      const named = getNamedType(field.type);
      const weight = cost.weight + argumentsCost(cost, node);
      const counted = node.selectionSet && isCompositeType(named) ? compileActual(node.selectionSet, named, fragments, variables) : [];
      // A field that weighs nothing and holds nothing that does (a scalar, mostly) is not walked.
      if (weight === 0 && counted.length === 0) continue;
      compiled.push({ key, weight, children: counted.length > 0 ? counted : undefined });
    }
    return compiled;
  };

  /** Per document (kept as long as the document is), its compiled walks; a few per document at most. */
  const actualWalks = new WeakMap<DocumentNode, Map<string, ActualField[]>>();
  const ACTUAL_WALKS_PER_DOCUMENT = 16;
  const actualWalkOf = (document: DocumentNode, operation: OperationDefinitionNode, root: GraphQLCompositeType, variables: Variables) => {
    let walks = actualWalks.get(document);
    if (!walks) {
      walks = new Map();
      actualWalks.set(document, walks);
    }
    const conditions = conditionVariables(document);
    const key = `${operation.name?.value ?? ''}\n${conditions.length ? JSON.stringify(conditions.map((name) => variables[name] ?? null)) : ''}`;
    let walk = walks.get(key);
    if (!walk) {
      walk = compileActual(operation.selectionSet, root, fragmentsOf(document), variables);
      if (walks.size >= ACTUAL_WALKS_PER_DOCUMENT) walks.clear();
      walks.set(key, walk);
    }
    return walk;
  };

  const rootOf = (operation: OperationDefinitionNode) => schema.getRootType(operation.operation);

  /** The request's variables, with the operation's defaults for those it leaves out. */
  const withDefaults = (operation: OperationDefinitionNode, variables: Variables): Variables => {
    let filled: Record<string, unknown> | undefined;
    for (const definition of operation.variableDefinitions ?? []) {
      const name = definition.variable.name.value;
      if (definition.defaultValue && variables[name] === undefined) {
        filled ??= { ...variables };
        filled[name] = valueFromASTUntyped(definition.defaultValue);
      }
    }
    return filled ?? variables;
  };

  return {
    estimate(document, operationName, given) {
      const operation = getOperationAST(document, operationName);
      const root = operation && rootOf(operation);
      if (!operation || !root) return 0;
      const variables = withDefaults(operation, given);
      const facts = factsOf(document);
      const key = `${facts.id}\n${operation.name?.value ?? ''}\n${JSON.stringify(facts.variables.map((name) => variables[name] ?? null))}`;
      const kept = estimates?.get(key);
      if (kept !== undefined) return kept.cost;
      const estimated = estimateSelection(operation.selectionSet, root, fragmentsOf(document), variables);
      if (estimates) {
        estimates.set(key, { cost: estimated, of: facts.estimates });
        facts.estimates.add(key);
      }
      return estimated;
    },
    forget(document) {
      const found = facts.get(document);
      if (!found || !estimates) return;
      for (const key of [...found.estimates]) estimates.delete(key);
    },
    actual(document, operationName, given, data) {
      const operation = getOperationAST(document, operationName);
      const root = operation && rootOf(operation);
      if (!operation || !root || data === null || typeof data !== 'object') return 0;
      return actualOf(actualWalkOf(document, operation, root, withDefaults(operation, given)), data as Record<string, unknown>);
    },
  };
}

/** The variables each document's `@skip` and `@include` read, worked out once per document. */
const conditions = new WeakMap<DocumentNode, readonly string[]>();

/**
 * The variables a document's `@skip` and `@include` read: what is worked out once per document and
 * depends on the request only through them is kept per their values (the actual-cost walks here,
 * query plans).
 */
export function conditionVariables(document: DocumentNode): readonly string[] {
  let names = conditions.get(document);
  if (!names) {
    const found = new Set<string>();
    visit(document, {
      Directive(node) {
        if (node.name.value !== 'skip' && node.name.value !== 'include') return;
        for (const argument of node.arguments ?? []) if (argument.value.kind === Kind.VARIABLE) found.add(argument.value.name.value);
      },
    });
    names = [...found];
    conditions.set(document, names);
  }
  return names;
}

/** A response key the actual cost counts: its field's weight (arguments included), and its selection's. */
interface ActualField {
  key: string;
  weight: number;
  children: ActualField[] | undefined;
}

/** The actual cost of an object of an answer: each object, list item and argument in it, nothing for null or absent. */
function actualOf(fields: readonly ActualField[], data: Record<string, unknown>): number {
  let total = 0;
  for (const field of fields) {
    if (field.key in data) total += valueCost(field, data[field.key]);
  }
  return total;
}

function valueCost(field: ActualField, value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (Array.isArray(value)) {
    let total = 0;
    for (const item of value) total += valueCost(field, item);
    return total;
  }
  return field.weight + (field.children && typeof value === 'object' ? actualOf(field.children, value as Record<string, unknown>) : 0);
}

/** Refused before execution: the operation's estimated cost is over MAX_COST. */
export function costLimitExceeded(estimated: number, maxCost: number) {
  return new DomainError(
    'COST_LIMIT_EXCEEDED',
    `The operation's estimated cost is ${estimated} points, over ${maxCost} per operation (the limit is the setting MAX_COST); ask for smaller pages or fewer fields.`,
    undefined,
    undefined,
    { cost: { estimated, max: maxCost }, limit: 'MAX_COST' },
  );
}
