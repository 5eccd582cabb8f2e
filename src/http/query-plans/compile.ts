import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  type GraphQLField,
  type GraphQLAbstractType,
  type GraphQLLeafType,
  GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  Kind,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { PlannedRead, PlannedWrite } from '../../schema/plans.js';
import { prismaObjectOf, relationOf, rowReaderOf, rulesOfField, rulesOfType, type ScopeMap } from './schema-facts.js';

/**
 * A query plan: what an operation does, worked out once per document, so that each execution of it
 * runs the Prisma reads its fields need and shapes their rows into the answer directly, with no
 * resolver called per field per row. It covers the documents most clients send: queries of the
 * catalogue, orders and stock through the lists and lookups the schema declares plannable
 * (`plannedList`, `plannedLookup`), their relations and connections, scalars, `__typename`,
 * fragments, aliases, arguments and variables, and `@include`/`@skip`. Anything else (a field with
 * its own resolver, a deprecated field, `@defer`, introspection, an authorization rule that depends
 * on the row) has no plan and is executed by graphql-js; so is any execution a plan cannot answer
 * exactly (a rule not passed, a bad argument, an error of any kind).
 *
 * A mutation has a plan when it is one field declared plannable (`plannedWrite`) whose answer reads
 * only the written row's own fields: the row the domain's write returns, with no relation to read
 * after it. A write is never run twice: once it has begun, its outcome is the answer.
 */
export interface Plan {
  operation: OperationDefinitionNode;
  /**
   * Every authorization rule stated on a field the plan answers, or on a type it completes (and the
   * interfaces it implements): a request that does not pass them all is answered by graphql-js.
   */
  rules: readonly ScopeMap[];
  fields: RootPlan[];
}

export type RootPlan =
  | { key: string; kind: 'typename'; value: string }
  | { key: string; kind: 'list'; field: GraphQLField<unknown, unknown>; nodes: readonly FieldNode[]; read: PlannedRead; connection: ConnectionPlan }
  | { key: string; kind: 'lookup'; field: GraphQLField<unknown, unknown>; nodes: readonly FieldNode[]; read: PlannedRead; nullable: boolean; object: ObjectPlan }
  | {
      key: string;
      kind: 'node';
      field: GraphQLField<unknown, unknown>;
      nodes: readonly FieldNode[];
      read: Extract<PlannedRead, { kind: 'node' }>;
      /** The selection as each type the arguments may name answers it. */
      objects: ReadonlyMap<string, ObjectPlan>;
    }
  | { key: string; kind: 'write'; field: GraphQLField<unknown, unknown>; nodes: readonly FieldNode[]; write: PlannedWrite; nullable: boolean; object: ObjectPlan };

/** The fields of a row of a Prisma model, in the order the answer has them. */
export interface ObjectPlan {
  typename: string;
  /** The columns the type always reads (its select mode), and the relations its fields need. */
  baseSelect: Record<string, unknown>;
  fields: FieldPlan[];
}

export type FieldPlan =
  | { key: string; kind: 'typename'; value: string }
  | { key: string; kind: 'leaf'; resolve: (row: Record<string, unknown>) => unknown; type: GraphQLLeafType; nullable: boolean }
  | { key: string; kind: 'relation'; relation: string; nullable: boolean; object: ObjectPlan }
  | {
      key: string;
      kind: 'connection';
      relation: string;
      field: GraphQLField<unknown, unknown>;
      nodes: readonly FieldNode[];
      read: PlannedRead;
      connection: ConnectionPlan;
    };

/** A Relay connection's selection: its own fields, and the one node type all its edges and nodes share. */
export interface ConnectionPlan {
  fields: ConnectionField[];
  /** The union of every selection of its nodes (`edges { node }` and `nodes` may both be asked). */
  node: ObjectPlan;
  /** Whether any rows are needed: only `totalCount` and its precision read none. */
  rows: boolean;
  /** Whether the list is counted: `totalCount` or `totalCountPrecision` asked. */
  totalCount: boolean;
}

export type ConnectionField =
  | { key: string; kind: 'typename'; value: string }
  | { key: string; kind: 'totalCount' | 'totalCountPrecision' }
  | { key: string; kind: 'nodes'; object: ObjectPlan }
  | { key: string; kind: 'edges'; fields: EdgeField[] }
  | { key: string; kind: 'pageInfo'; fields: Array<{ key: string; kind: PageInfoField | 'typename'; value?: string }> };

export type EdgeField = { key: string; kind: 'typename'; value: string } | { key: string; kind: 'cursor' } | { key: string; kind: 'node'; object: ObjectPlan };
type PageInfoField = 'hasNextPage' | 'hasPreviousPage' | 'startCursor' | 'endCursor';

/** Why a document has no plan (for the log at debug level, and the tests). */
export class NoPlan extends Error {
  override name = 'NoPlan';
}

type Fragments = Record<string, FragmentDefinitionNode>;

interface Context {
  schema: GraphQLSchema;
  fragments: Fragments;
  /** The values of the variables `@include`/`@skip` read: a plan holds for one set of them. */
  conditions: Record<string, unknown>;
  rules: Set<ScopeMap>;
}

/**
 * The plan of `operationName` in `document` (already parsed and validated), for requests whose
 * `@include`/`@skip` variables have the values in `conditions`. Throws NoPlan when it has none.
 */
export function compilePlan(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  conditions: Record<string, unknown>,
): Plan {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName
    ? operations.find((definition) => definition.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!operation) throw new NoPlan('no single operation');
  if (operation.operation === 'subscription') throw new NoPlan('a subscription');
  if (operation.directives?.length) throw new NoPlan('directives on the operation');
  const fragments: Fragments = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const context: Context = { schema, fragments, conditions, rules: new Set() };
  if (operation.operation === 'mutation') return writePlan(context, operation);
  const query = schema.getQueryType()!;
  checkType(context, query);
  const fields = [...collectFields(context, query, operation.selectionSet)].map(([key, nodes]): RootPlan => {
    const name = nodes[0]!.name.value;
    if (name === '__typename') return { key, kind: 'typename', value: query.name };
    const field = query.getFields()[name];
    if (!field) throw new NoPlan(`no field Query.${name}`);
    checkField(context, field);
    const read = field.extensions.plannedRead as PlannedRead | undefined;
    if (!read) throw new NoPlan(`Query.${name} is not plannable`);
    const selection = subSelection(nodes);
    if (read.kind === 'list') {
      return { key, kind: 'list', field, nodes, read, connection: connectionPlan(context, field, selection) };
    }
    if (read.kind === 'node') {
      // Planned for every type the arguments may name: the type is known only from them.
      const abstract = getNamedType(field.type);
      if (!isAbstractType(abstract)) throw new NoPlan(`Query.${name} is not of an interface or a union`);
      checkAbstractType(context, abstract);
      const objects = new Map<string, ObjectPlan>();
      for (const type of context.schema.getPossibleTypes(abstract)) {
        objects.set(type.name, objectPlan(context, type, selection));
      }
      return { key, kind: 'node', field, nodes, read, objects };
    }
    const type = getNamedType(field.type);
    if (!isObjectType(type)) throw new NoPlan(`Query.${name} is not an object`);
    return { key, kind: 'lookup', field, nodes, read, nullable: !isNonNullType(field.type), object: objectPlan(context, type, selection) };
  });
  return { operation, rules: [...context.rules], fields };
}

/** A mutation's plan: one plannable write, whose answer is the written row's own fields. */
function writePlan(context: Context, operation: OperationDefinitionNode): Plan {
  const mutation = context.schema.getMutationType()!;
  checkType(context, mutation);
  const selected = [...collectFields(context, mutation, operation.selectionSet)];
  if (selected.length !== 1) throw new NoPlan('a mutation of more than one field');
  const [[key, nodes]] = selected as [[string, FieldNode[]]];
  const field = mutation.getFields()[nodes[0]!.name.value];
  if (!field) throw new NoPlan(`no field Mutation.${nodes[0]!.name.value}`);
  checkField(context, field);
  const write = field.extensions.plannedWrite as PlannedWrite | undefined;
  if (!write) throw new NoPlan(`Mutation.${field.name} is not plannable`);
  const type = getNamedType(field.type);
  if (!isObjectType(type)) throw new NoPlan(`Mutation.${field.name} is not an object`);
  const object = objectPlan(context, type, subSelection(nodes));
  if (object.fields.some((plan) => plan.kind !== 'leaf' && plan.kind !== 'typename')) {
    throw new NoPlan(`Mutation.${field.name} selects a relation, read after the write in its transaction`);
  }
  return { operation, rules: [...context.rules], fields: [{ key, kind: 'write', field, nodes, write, nullable: !isNonNullType(field.type), object }] };
}

/** What every field must meet to be planned: not deprecated, and rules the plan can check before it reads. */
function checkField(context: Context, field: GraphQLField<unknown, unknown>) {
  if (field.deprecationReason) throw new NoPlan(`${field.name} is deprecated`);
  const rules = rulesOfField(field);
  if (rules === null) throw new NoPlan(`${field.name} has a rule a plan cannot check`);
  for (const rule of rules) context.rules.add(rule);
}

/** Every object type the plan completes: its rules and its interfaces' too. */
function checkType(context: Context, type: GraphQLObjectType) {
  const rules = rulesOfType(type);
  if (rules === null) throw new NoPlan(`${type.name} has a rule a plan cannot check`);
  for (const rule of rules) context.rules.add(rule);
}

/** A union's rules (an interface's are checked on each type that implements it). */
function checkAbstractType(context: Context, type: GraphQLAbstractType) {
  if (!isUnionType(type)) return;
  const rules = rulesOfType(type);
  if (rules === null) throw new NoPlan(`${type.name} has a rule a plan cannot check`);
  for (const rule of rules) context.rules.add(rule);
}

/** All selections of fields answered under one key, as graphql-js merges them. */
function subSelection(nodes: readonly FieldNode[]): SelectionSetNode[] {
  return nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
}

/** The fields selected on `type` by the selection sets, by response key in answer order (graphql-js' collectFields). */
function collectFields(context: Context, type: GraphQLObjectType, ...sets: SelectionSetNode[]): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const visited = new Set<string>();
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (!included(context, selection.directives ?? [])) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const list = fields.get(key);
        if (list) list.push(selection);
        else fields.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (selection.typeCondition && !applies(context, selection.typeCondition.name.value, type)) continue;
        collect(selection.selectionSet);
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = context.fragments[name];
        if (!fragment) throw new NoPlan(`no fragment ${name}`);
        if (!applies(context, fragment.typeCondition.name.value, type)) continue;
        collect(fragment.selectionSet);
      }
    }
  };
  for (const set of sets) collect(set);
  return fields;
}

/** Whether a fragment on `condition` (the type itself, an interface it implements, a union it is in) applies to `type`. */
function applies(context: Context, condition: string, type: GraphQLObjectType): boolean {
  if (condition === type.name) return true;
  const named = context.schema.getType(condition);
  return named !== undefined && isAbstractType(named) && context.schema.isSubType(named, type);
}

/** Whether `@include`/`@skip` keep a selection, from literals or the plan's condition variables. */
function included(context: Context, directives: ReadonlyArray<{ name: { value: string }; arguments?: ReadonlyArray<{ name: { value: string }; value: ValueNode }> }>) {
  for (const directive of directives) {
    const name = directive.name.value;
    if (name !== 'include' && name !== 'skip') throw new NoPlan(`@${name}`);
    const argument = directive.arguments?.find((candidate) => candidate.name.value === 'if');
    if (!argument) throw new NoPlan(`@${name} without if`);
    const value =
      argument.value.kind === Kind.BOOLEAN
        ? argument.value.value
        : argument.value.kind === Kind.VARIABLE
          ? context.conditions[argument.value.name.value]
          : undefined;
    if (typeof value !== 'boolean') throw new NoPlan(`@${name} without a boolean`);
    if ((name === 'include') !== value) return false;
  }
  return true;
}

/** The plan of the rows of a Prisma model type under `selections`. */
function objectPlan(context: Context, type: GraphQLObjectType, selections: SelectionSetNode[]): ObjectPlan {
  const prisma = prismaObjectOf(type);
  if (!prisma) throw new NoPlan(`${type.name} is not a Prisma model`);
  checkType(context, type);
  const fieldDefinitions = type.getFields();
  const fields = [...collectFields(context, type, ...selections)].map(([key, nodes]): FieldPlan => {
    const name = nodes[0]!.name.value;
    if (name === '__typename') return { key, kind: 'typename', value: type.name };
    const field = fieldDefinitions[name];
    if (!field) throw new NoPlan(`no field ${type.name}.${name}`);
    checkField(context, field);
    const relation = relationOf(field);
    const named = getNamedType(field.type);
    if (isLeafType(named)) {
      if (nodes.some((node) => node.arguments?.length)) throw new NoPlan(`${type.name}.${name} has arguments`);
      const resolve = rowReaderOf(field);
      if (!resolve) throw new NoPlan(`${type.name}.${name} reads more than its row`);
      return { key, kind: 'leaf', resolve, type: named, nullable: !isNonNullType(field.type) };
    }
    if (!relation) throw new NoPlan(`${type.name}.${name} is not a relation`);
    const selection = subSelection(nodes);
    const read = field.extensions.plannedRead as PlannedRead | undefined;
    if (read?.kind === 'list') {
      // One read serves every selection merged here (edges and nodes of the parent list): only if they ask alike.
      const asked = new Set(nodes.map((node) => (node.arguments ?? []).map((argument) => print(argument)).join(',')));
      if (asked.size > 1) throw new NoPlan(`${type.name}.${name} asked with different arguments`);
      return { key, kind: 'connection', relation, field, nodes, read, connection: connectionPlan(context, field, selection) };
    }
    if (!isObjectType(named) || isListType(getNullableType(field.type))) throw new NoPlan(`${type.name}.${name} is a list without a plan`);
    if (nodes.some((node) => node.arguments?.length)) throw new NoPlan(`${type.name}.${name} has arguments`);
    return { key, kind: 'relation', relation, nullable: !isNonNullType(field.type), object: objectPlan(context, named, selection) };
  });
  return { typename: type.name, baseSelect: prisma.select, fields };
}

/** A connection's selection: edges, nodes, pageInfo, totalCount. */
function connectionPlan(context: Context, field: GraphQLField<unknown, unknown>, selections: SelectionSetNode[]): ConnectionPlan {
  const connectionType = getNamedType(field.type);
  if (!(connectionType instanceof GraphQLObjectType)) throw new NoPlan(`${field.name} is not a connection`);
  const definitions = connectionType.getFields();
  const nodeType = getNamedType(definitions.nodes?.type ?? definitions.edges!.type);
  const edgeType = getNamedType(definitions.edges!.type) as GraphQLObjectType;
  const node = isObjectType(nodeType) && nodeType !== edgeType ? nodeType : (getNamedType(edgeType.getFields().node!.type) as GraphQLObjectType);
  checkType(context, connectionType);
  // Every selection of a node, merged: the rows are read once and shaped for each.
  const nodeSelections: SelectionSetNode[] = [];
  let rows = false;
  let totalCount = false;
  const fields = [...collectFields(context, connectionType, ...selections)].map(([key, nodes]): ConnectionField => {
    const name = nodes[0]!.name.value;
    if (name === '__typename') return { key, kind: 'typename', value: connectionType.name };
    if (!definitions[name]) throw new NoPlan(`${connectionType.name}.${name}`);
    checkField(context, definitions[name]);
    if (name === 'totalCount' || name === 'totalCountPrecision') {
      totalCount = true;
      return { key, kind: name };
    }
    rows = true;
    if (name === 'nodes') {
      nodeSelections.push(...subSelection(nodes));
      return { key, kind: 'nodes', object: objectPlan(context, node, subSelection(nodes)) };
    }
    if (name === 'pageInfo') {
      const pageInfo = getNamedType(definitions.pageInfo!.type) as GraphQLObjectType;
      checkType(context, pageInfo);
      return {
        key,
        kind: 'pageInfo',
        fields: [...collectFields(context, pageInfo, ...subSelection(nodes))].map(([infoKey, infoNodes]) => {
          const infoName = infoNodes[0]!.name.value;
          if (infoName === '__typename') return { key: infoKey, kind: 'typename' as const, value: pageInfo.name };
          if (!['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor'].includes(infoName)) throw new NoPlan(`PageInfo.${infoName}`);
          checkField(context, pageInfo.getFields()[infoName]!);
          return { key: infoKey, kind: infoName as PageInfoField };
        }),
      };
    }
    if (name !== 'edges') throw new NoPlan(`${connectionType.name}.${name}`);
    checkType(context, edgeType);
    return {
      key,
      kind: 'edges',
      fields: [...collectFields(context, edgeType, ...subSelection(nodes))].map(([edgeKey, edgeNodes]): EdgeField => {
        const edgeName = edgeNodes[0]!.name.value;
        if (edgeName === '__typename') return { key: edgeKey, kind: 'typename', value: edgeType.name };
        if (edgeName !== 'cursor' && edgeName !== 'node') throw new NoPlan(`${edgeType.name}.${edgeName}`);
        checkField(context, edgeType.getFields()[edgeName]!);
        if (edgeName === 'cursor') return { key: edgeKey, kind: 'cursor' };
        nodeSelections.push(...subSelection(edgeNodes));
        return { key: edgeKey, kind: 'node', object: objectPlan(context, node, subSelection(edgeNodes)) };
      }),
    };
  });
  return { fields, node: objectPlan(context, node, nodeSelections), rows, totalCount };
}
