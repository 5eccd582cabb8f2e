import { formatPrismaCursor } from '@pothos/plugin-prisma';
import { getConnectionPageSize, validateConnectionArguments } from '@pothos/core';
import type { FieldNode, GraphQLField, GraphQLSchema } from 'graphql';
import type { PrismaClient } from '../../database/client.js';
import { findByKey } from '../../database/find-by-key.js';
import { type FindManyArgs, findMany, findManyWithTotal } from '../../database/find-many.js';
import type { Lookups } from '../../domain/lookups.js';
import { withoutStackTrace } from '../../errors.js';
import type { Principal } from '../../auth/scopes.js';
import { checkPageSize, COUNTED_ROWS, type PageArgs, toldCount } from '../../pothos-plugins/paging.js';
import { authorizeNode, nodeTypes } from '../../pothos-plugins/global-ids.js';
import { countOf, delegateOf, type ListRead, type Model, type NamedObject, type PlannedRead, type WriteContext } from '../../schema/plans.js';
import { isoTime } from '../iso-time.js';
import type { ConnectionPlan, FieldPlan, ObjectPlan, Plan, RootPlan } from './compile.js';
import { argumentsOf } from './schema-facts.js';

/**
 * Runs a plan for one request: the arguments worked out from the variables
 * (each field's once, however many rows it answers for), one Prisma read per
 * root field (the relations and their connections in its select, as the
 * Prisma plugin plans them), and the rows shaped into the answer. The
 * connection semantics are @pothos/plugin-prisma's (prismaCursorConnectionQuery,
 * wrapConnectionResult): the same page for the same arguments. Anything a
 * plan cannot answer exactly throws, and the request is answered field by
 * field instead.
 */
export interface PlanRequest {
  prisma: PrismaClient;
  lookups: Lookups;
  /** Coerced variables (graphql-js getVariableValues). */
  variables: Record<string, unknown>;
  schema: GraphQLSchema;
  /** Read a list with a statement of the gateway's own where it has one (src/database/find-many.ts), else with Prisma's. */
  ownStatements: boolean;
  /** A mutation's: the primary's client, and where its events go. */
  write?: WriteContext;
  /** Who asks: what node(id:) may give them (src/pothos-plugins/global-ids.ts). */
  principal: Principal;
}

/**
 * A write that had begun failed, or its row could not be shaped: what happened is the answer (the
 * write may have committed), never a second run of it.
 */
export class WriteFailed extends Error {
  override name = 'WriteFailed';
}

type Row = Record<string, unknown>;

/** All nodes of a field must ask the same arguments: graphql-js would answer them as one field too (validation checks it). */
const argumentsOfAll = (field: GraphQLField<unknown, unknown>, nodes: readonly FieldNode[], pass: Pass) =>
  argumentsOf(field, nodes[0]!, pass.variables, pass.schema);

/** The page a connection's arguments ask for, as @pothos/plugin-prisma's prismaCursorConnectionQuery makes it. */
function pageQuery(read: Extract<PlannedRead, { kind: 'list' }>, args: PageArgs) {
  checkPageSize(args);
  validateConnectionArguments(args);
  const { before, after, first, last } = args;
  if (before && after) throw new Error('before and after');
  if (before != null && first != null) throw new Error('before and first');
  if (after != null && last != null) throw new Error('after and last');
  const cursor = before ?? after;
  const { limit } = getConnectionPageSize({ args, defaultSize: read.defaultSize, maxSize: read.maxSize });
  const take = before != null || last != null ? -limit : limit;
  return cursor == null
    ? { take, skip: 0 }
    : { cursor: { [read.cursor]: parseIssuedCursor(cursor) }, take, skip: 1 };
}

/** The id of an issued cursor (checkPageSize has checked it is one: base64 of `GPC:I:<id>`). */
function parseIssuedCursor(cursor: string): bigint {
  return BigInt(Buffer.from(cursor, 'base64').toString('utf8').slice('GPC:I:'.length));
}

/** What one request works out once, however many rows it shapes. */
interface Pass {
  variables: Record<string, unknown>;
  schema: GraphQLSchema;
  /** Per connection field (by its first field node): its arguments and its page. */
  pages: Map<FieldNode, { args: PageArgs; page: ReturnType<typeof pageQuery>; read: ListRead }>;
}

/** A related connection's arguments, page and order, worked out once per request. */
function pageOf(pass: Pass, field: Extract<FieldPlan, { kind: 'connection' }>) {
  let found = pass.pages.get(field.nodes[0]!);
  if (!found) {
    const read = field.read as Extract<PlannedRead, { kind: 'list' }>;
    const args = argumentsOfAll(field.field, field.nodes, pass) as PageArgs;
    found = { args, page: pageQuery(read, args), read: read.read(args as Record<string, unknown>) };
    pass.pages.set(field.nodes[0]!, found);
  }
  return found;
}

/** The Prisma select of a row of `plan`: its type's columns, and each relation its fields ask for. */
function selectOf(pass: Pass, plan: ObjectPlan): Row {
  const select: Row = { ...plan.baseSelect };
  const counts: Row = {};
  for (const field of plan.fields) {
    if (field.kind === 'relation') {
      // A relation asked under two aliases is read once, with what both ask for.
      const nested = selectOf(pass, field.object);
      const existing = select[field.relation] as { select: Row } | undefined;
      select[field.relation] = { select: existing ? mergeSelects(existing.select, nested) : nested };
    } else if (field.kind === 'connection') {
      if (select[field.relation] !== undefined || counts[field.relation]) throw new Error(`${field.relation} asked twice`);
      const { page, read } = pageOf(pass, field);
      if (field.connection.rows) {
        select[field.relation] = { ...readOptions(read), ...page, select: selectOf(pass, field.connection.node) };
      }
      if (field.connection.totalCount) counts[field.relation] = true;
    }
  }
  if (Object.keys(counts).length > 0) select._count = { select: counts };
  return select;
}

/** Two selects of one row, merged: each column and relation either asks for. */
function mergeSelects(a: Row, b: Row): Row {
  const merged: Row = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const existing = merged[key];
    if (existing === undefined || existing === value) merged[key] = value;
    else if (key === '_count') merged[key] = { select: { ...(existing as { select: Row }).select, ...(value as { select: Row }).select } };
    else if (isRelationSelect(existing) && isRelationSelect(value) && Object.keys(existing).length === 1 && Object.keys(value).length === 1) {
      merged[key] = { select: mergeSelects(existing.select, value.select) };
    } else if (JSON.stringify(existing) !== JSON.stringify(value)) {
      // A list asked twice with different pages cannot be one read.
      throw new Error(`${key} asked twice, differently`);
    }
  }
  return merged;
}

const isRelationSelect = (value: unknown): value is { select: Row } => typeof value === 'object' && value !== null && 'select' in value;

const readOptions = (read: ListRead) => ({ ...(read.where ? { where: read.where } : {}), orderBy: read.orderBy });

/** Runs the plan: each root field's read, in parallel as graphql-js runs a query's root fields. */
export async function executePlan(plan: Plan, request: PlanRequest): Promise<Row> {
  const pass: Pass = { variables: request.variables, schema: request.schema, pages: new Map() };
  const values = await Promise.all(plan.fields.map((field) => rootValue(pass, request, field)));
  const data: Row = {};
  plan.fields.forEach((field, index) => {
    data[field.key] = values[index];
  });
  return data;
}

async function rootValue(pass: Pass, request: PlanRequest, field: RootPlan): Promise<unknown> {
  if (field.kind === 'typename') return field.value;
  const args = argumentsOfAll(field.field, field.nodes, pass);
  if (field.kind === 'write') {
    if (!request.write) throw new Error('a write without its context');
    try {
      return shapeObject(pass, field.object, await field.write.write(args, request.write));
    } catch (error) {
      // Only its cause is ever read (plans.ts).
      throw withoutStackTrace(() => new WriteFailed(`${field.key} failed`, { cause: error }));
    }
  }
  if (field.kind === 'node') {
    const wanted = field.read.named(args);
    // A caller who may not read one of them: graphql-js answers, with the error at its place.
    for (const { typename } of wanted) authorizeNode(request.principal, typename);
    const found = await Promise.all(wanted.map((named) => nodeOf(pass, request, field.objects, named)));
    return field.read.list ? found : found[0];
  }
  const read = field.read;
  if (field.kind === 'lookup' && read.kind === 'lookup') {
    // Worked out before the read joins other requests' lookups: a bad argument is this request's alone.
    const query = { select: selectOf(pass, field.object), where: read.where(args) };
    const row = await (read.batched ? lookUp(request, read.model, query.select, query.where) : delegateOf(request.prisma, read.model).findUnique(query));
    if (row === null) {
      if (!field.nullable) throw new Error(`${field.key} found nothing`);
      return null;
    }
    return shapeObject(pass, field.object, row);
  }
  if (field.kind !== 'list' || read.kind !== 'list' || read.model === undefined) throw new Error('a root list without a model');
  const page = pageQuery(read, args as PageArgs);
  const listRead = read.read(args);
  const query = field.connection.rows ? { ...page, select: selectOf(pass, field.connection.node), ...readOptions(listRead) } : undefined;
  const { rows, totalCount } = await readList(request, read.model, query, field.connection.totalCount ? listRead.where : false);
  return shapeConnection(pass, field.connection, read, args as PageArgs, page.take, rows, totalCount);
}

/**
 * A root list's page (`query`, unless only its count is asked) and the count of what `countWhere`
 * matches (false: not asked): by the gateway's own statement where there is one, both in one.
 */
async function readList(request: PlanRequest, model: Model, query: FindManyArgs | undefined, countWhere: ListRead['where'] | false) {
  const delegate = delegateOf(request.prisma, model);
  const count = () => countOf(request.prisma, model, countWhere || undefined);
  if (!query) return { rows: [], totalCount: countWhere === false ? undefined : await count() };
  const viaPrisma = () => delegate.findMany(query);
  if (!request.ownStatements) {
    const [rows, totalCount] = await Promise.all([viaPrisma(), countWhere === false ? undefined : count()]);
    return { rows, totalCount };
  }
  if (countWhere === false) return { rows: await findMany(request.prisma, model, query, viaPrisma), totalCount: undefined };
  const { rows, total } = await findManyWithTotal(request.prisma, model, query, { rows: viaPrisma, total: count }, COUNTED_ROWS);
  return { rows, totalCount: total };
}

/** The object named by its type and key, shaped as its type's selection asks, or null when there is no such row. */
async function nodeOf(pass: Pass, request: PlanRequest, objects: ReadonlyMap<string, ObjectPlan>, { typename, id }: NamedObject): Promise<Row | null> {
  const type = nodeTypes[typename];
  const object = objects.get(typename);
  if (!type || !object) throw new Error(`no Node type ${typename}`);
  const select = selectOf(pass, object);
  const where = { [type.key]: BigInt(id) };
  const row = await lookUp(request, type.model, select, where);
  return row === null ? null : shapeObject(pass, object, row);
}

/**
 * One row by its key, read together with the other lookups of the same turn: by the gateway's own
 * statement (find-by-key.ts), or through Prisma's findUnique batched by the request's lookups.
 */
function lookUp(request: PlanRequest, model: Model, select: Row, where: Row) {
  return request.ownStatements
    ? findByKey(request.prisma, model, select, where)
    : request.lookups(() => delegateOf(request.prisma, model).findUnique({ select, where }));
}

/** A page of rows as @pothos/plugin-prisma's wrapConnectionResult makes it, shaped for the connection's selection. */
function shapeConnection(
  pass: Pass,
  plan: ConnectionPlan,
  read: Extract<PlannedRead, { kind: 'list' }>,
  args: PageArgs,
  take: number,
  results: Row[],
  totalCount: number | undefined,
): Row {
  const gotFullResults = results.length === Math.abs(take);
  const backward = args.before != null || args.last != null;
  const hasNextPage = args.before != null ? true : args.last != null ? false : gotFullResults;
  const hasPreviousPage = args.after != null ? true : backward ? gotFullResults : false;
  const rows = gotFullResults ? results.slice(take < 0 ? 1 : 0, take < 0 ? results.length : -1) : results;
  // Only the cursors the selection shows are made (each is a base64 string).
  const cursors: Array<string | undefined> = [];
  const cursorAt = (index: number): string | null => {
    if (index < 0 || index >= rows.length) return null;
    return (cursors[index] ??= formatPrismaCursor(rows[index]!, read.cursor));
  };
  const connection: Row = {};
  for (const field of plan.fields) {
    switch (field.kind) {
      case 'typename':
        connection[field.key] = field.value;
        break;
      case 'totalCount':
        connection[field.key] = toldCount(totalCount!).count;
        break;
      case 'totalCountPrecision':
        connection[field.key] = toldCount(totalCount!).precision;
        break;
      case 'nodes':
        connection[field.key] = rows.map((row) => shapeObject(pass, field.object, row));
        break;
      case 'pageInfo': {
        const info: Row = {};
        for (const infoField of field.fields) {
          info[infoField.key] =
            infoField.kind === 'typename'
              ? infoField.value
              : infoField.kind === 'hasNextPage'
                ? hasNextPage
                : infoField.kind === 'hasPreviousPage'
                  ? hasPreviousPage
                  : infoField.kind === 'startCursor'
                    ? cursorAt(0)
                    : cursorAt(rows.length - 1);
        }
        connection[field.key] = info;
        break;
      }
      case 'edges':
        connection[field.key] = rows.map((row, index) => {
          const edge: Row = {};
          for (const edgeField of field.fields) {
            edge[edgeField.key] =
              edgeField.kind === 'typename' ? edgeField.value : edgeField.kind === 'cursor' ? cursorAt(index) : shapeObject(pass, edgeField.object, row);
          }
          return edge;
        });
        break;
    }
  }
  return connection;
}

/** A row shaped for its selection: each leaf resolved and serialised as graphql-js completes it. */
function shapeObject(pass: Pass, plan: ObjectPlan, row: Row): Row {
  const shaped: Row = {};
  for (const field of plan.fields) {
    switch (field.kind) {
      case 'typename':
        shaped[field.key] = field.value;
        break;
      case 'leaf': {
        const value = field.resolve(row);
        if (value === null || value === undefined) {
          if (!field.nullable) throw new Error(`${plan.typename}.${field.key} is null`);
          shaped[field.key] = null;
        } else {
          const serialized = field.type.serialize(value);
          // A Date (DateTime's serialized value) written as JSON.stringify would write it: one
          // object with toJSON anywhere in the answer takes V8's JSON.stringify off its fast path.
          shaped[field.key] = serialized instanceof Date ? isoTime(serialized) : serialized;
        }
        break;
      }
      case 'relation': {
        const related = row[field.relation] as Row | null | undefined;
        if (related === null || related === undefined) {
          if (!field.nullable) throw new Error(`${plan.typename}.${field.key} is null`);
          shaped[field.key] = null;
        } else {
          shaped[field.key] = shapeObject(pass, field.object, related);
        }
        break;
      }
      case 'connection': {
        const { args, page } = pageOf(pass, field);
        const rows = (row[field.relation] as Row[] | undefined) ?? [];
        const count = (row._count as Record<string, number> | undefined)?.[field.relation];
        shaped[field.key] = shapeConnection(pass, field.connection, field.read as Extract<PlannedRead, { kind: 'list' }>, args, page.take, rows, count);
        break;
      }
    }
  }
  return shaped;
}
