import { getDatamodel } from '../generated/pothos-prisma-types.js';
import * as enums from '../generated/prisma/enums.js';
import { directAccessOf, type PrismaClient, runOnPool } from './client.js';
import { keptCountExpression, matchesEveryRow } from './row-counts.js';
import type { Statement } from './statement-templates.js';

/**
 * A Prisma `findMany` read with one SQL statement of the gateway's own,
 * answering with the rows Prisma's would (the same keys, BigInt, Date, enum
 * labels, `_count`), in the same order.
 *
 * Why: Prisma builds every relation as JSONB in a LATERAL subquery
 * (JSONB_BUILD_OBJECT, JSONB_AGG over a `SELECT *` of the related table). For
 * the pages the gateway serves most, PostgreSQL spends 2-3x longer on that than
 * on a statement that joins to-one relations as plain columns and builds each
 * to-many page as one JSON array of arrays over only the columns it shows (so
 * a covering index can serve it): docs/performance.md, "Nested lists".
 *
 * It covers what the query plans ask (src/http/query-plans/): scalar selects,
 * to-one relations, to-many pages (where, orderBy, take, skip) and `_count` of
 * relations, nested to any depth; a root cursor over an order that ends with
 * the cursor's column; `where` of equalities, `null`, `in` and `contains`. Anything
 * else throws `Unsupported`, and the caller reads through Prisma.
 * The semantics are Prisma's own (its cursor predicate, a negative `take` read
 * backwards and turned round), and the tests compare every planned answer
 * with Prisma's field-by-field one.
 */

type Row = Record<string, unknown>;

export interface FindManyArgs {
  select: Row;
  where?: Row | undefined;
  orderBy: Row | Row[];
  take?: number;
  skip?: number;
  cursor?: Row;
}

/** A read outside what a statement of our own covers: it goes through Prisma. */
export class Unsupported extends Error {
  override name = 'Unsupported';
}

const unsupported = (why: string): never => {
  throw new Unsupported(why);
};

interface Field {
  name: string;
  column: string;
  kind: 'scalar' | 'enum' | 'object';
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  relationName: string | undefined;
  relationFromFields: readonly string[];
}

interface Model {
  name: string;
  table: string;
  fields: Map<string, Field>;
  id: Field | undefined;
}

export type Models = Map<string, Model>;

/** Prisma's schema as the statements need it, by the delegates' model names (`pet`, `inventoryItem`). */
interface RuntimeDataModel {
  models: Record<string, { dbName: string | null; fields: Array<{ name: string; dbName?: string | null }> }>;
}

/**
 * The tables and columns of the Prisma schema. Relations, ids and lists come from the datamodel the
 * Pothos generator writes; the database names (`@map`, `@@map`) only Prisma's client holds.
 * Undefined when the client does not have them (a Prisma that changed its inside): no statement of
 * our own is made then, and every read goes through Prisma.
 */
export function modelsOf(prisma: PrismaClient): Models | undefined {
  const runtime = (prisma as unknown as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
  if (!runtime?.models) return undefined;
  const models: Models = new Map();
  for (const [name, model] of Object.entries(getDatamodel().datamodel.models)) {
    const names = runtime.models[name];
    if (!names) return undefined;
    const fields = new Map<string, Field>();
    for (const field of model.fields) {
      const column = names.fields.find((candidate) => candidate.name === field.name)?.dbName ?? field.name;
      fields.set(field.name, {
        name: field.name,
        column,
        kind: field.kind as Field['kind'],
        type: field.type,
        isList: field.isList,
        isRequired: field.isRequired,
        isId: field.isId,
        relationName: field.relationName ?? undefined,
        relationFromFields: field.relationFromFields ?? [],
      });
    }
    const ids = [...fields.values()].filter((field) => field.isId);
    models.set(name.charAt(0).toLowerCase() + name.slice(1), {
      name,
      table: `"public".${quote(names.dbName ?? name)}`,
      fields,
      id: ids.length === 1 ? ids[0] : undefined,
    });
  }
  return models;
}

/** Leads every statement of our own, so that logs and pg_stat_statements tell them from Prisma's. */
export const STATEMENT_MARK = '/* petstore read */';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The statement's text and parameters, built as the read's parts are walked. */
class Builder {
  readonly params: unknown[] = [];
  /** The columns read of each table alias, for the pages that select only those. */
  readonly used = new Map<string, Set<string>>();
  private aliases = 0;
  constructor(readonly models: Models) {}

  alias(): string {
    return `t${this.aliases++}`;
  }

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  column(alias: string, field: Field): string {
    let used = this.used.get(alias);
    if (!used) this.used.set(alias, (used = new Set()));
    used.add(field.column);
    return `${alias}.${quote(field.column)}`;
  }

  model(name: string): Model {
    return this.models.get(name.charAt(0).toLowerCase() + name.slice(1)) ?? unsupported(`no model ${name}`);
  }
}

/** How a relation's rows meet its parent's: the parent's column and the related table's. */
function joinOf(builder: Builder, model: Model, field: Field): { target: Model; local: Field; remote: Field } {
  const target = builder.model(field.type);
  if (field.relationFromFields.length === 1) {
    // This side holds the foreign key; it references the target's id (the only kind this schema has).
    const local = model.fields.get(field.relationFromFields[0]!) ?? unsupported(`${model.name}.${field.name}`);
    return { target, local, remote: target.id ?? unsupported(`${target.name} has no single id`) };
  }
  const other = [...target.fields.values()].find(
    (candidate) => candidate.relationName === field.relationName && candidate.relationFromFields.length === 1 && candidate !== field,
  );
  if (!other || !model.id) return unsupported(`${model.name}.${field.name}`);
  return { target, local: model.id, remote: target.fields.get(other.relationFromFields[0]!)! };
}

/**
 * What a row's values are in the statement: columns of the root row, items of a JSON array below
 * it, or the texts of a text array (a related page of columns alone, see pageOf).
 */
type Encoding = 'columns' | 'json' | 'text';

/** A row's select as the statement's values, in order, and how to read them back into Prisma's row. */
interface Shape {
  expressions: string[];
  /** The LEFT JOINs of its to-one relations, after the FROM of its table. */
  joins: string[];
  read(values: readonly unknown[], start: number): Row;
}

const toBigInt = (value: unknown) => (value === null ? null : BigInt(value as string));
const toDate = (value: unknown) => (value === null ? null : new Date(value as number));
const textToNumber = (value: unknown) => (value === null ? null : Number(value));
const textToBoolean = (value: unknown) => (value === null ? null : value === 'true');
const textToDate = (value: unknown) => (value === null ? null : new Date(Number(value)));

/**
 * A time column's milliseconds since 1970, as a float8. date_part gives the seconds as a float8, where
 * extract's numeric costs PostgreSQL more; rounded, it is exact for a column of millisecond precision
 * (every one of the schema's, a test of plan-statements holds them to it), which a float8 holds to
 * well under a millisecond in years 1 to 9999.
 */
const epochMilliseconds = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

/** A scalar's value as text, and how to read it back, for a text array's item (its items are all of one type). */
function textScalar(column: string, field: Field): { expression: string; convert?: (value: unknown) => unknown } {
  switch (field.type) {
    case 'BigInt':
      return { expression: `${column}::text`, convert: toBigInt };
    case 'Int':
    case 'Float':
      return { expression: `${column}::text`, convert: textToNumber };
    case 'Boolean':
      return { expression: `${column}::text`, convert: textToBoolean };
    case 'DateTime':
      return { expression: `${epochMilliseconds(column)}::text`, convert: textToDate };
    default:
      // String, and an enum's label.
      return { expression: `${column}::text` };
  }
}

/** The scalar types whose values come back from PostgreSQL (as columns, and inside JSON) as Prisma gives them. */
const READABLE = new Set(['String', 'Int', 'Float', 'Boolean', 'BigInt', 'DateTime']);

function scalar(builder: Builder, alias: string, field: Field, encoding: Encoding): { expression: string; convert?: (value: unknown) => unknown } {
  if (field.kind !== 'enum' && !READABLE.has(field.type)) unsupported(`${field.name} of type ${field.type}`);
  const column = builder.column(alias, field);
  if (encoding === 'text') return textScalar(column, field);
  if (field.kind === 'enum') return { expression: `${column}::text` };
  // 64-bit integers come as text (pg's own parsing of int8; JSON has none) and are made BigInts, as Prisma does.
  if (field.type === 'BigInt') return { expression: encoding === 'json' ? `${column}::text` : column, convert: toBigInt };
  // A time comes as milliseconds since 1970 in UTC, as Prisma reads it whatever the column's time zone (or none)
  // and the session's: no text of a timestamp to parse, which JavaScript would read as local time without a zone.
  if (field.type === 'DateTime') return { expression: epochMilliseconds(column), convert: toDate };
  return { expression: column };
}

function shapeOf(builder: Builder, model: Model, alias: string, select: Row, encoding: Encoding): Shape {
  const expressions: string[] = [];
  const joins: string[] = [];
  const readers: Array<(values: readonly unknown[], start: number, row: Row) => void> = [];
  for (const [key, value] of Object.entries(select)) {
    if (value === false || value === undefined) continue;
    if (key === '_count') {
      const counted = (value as { select?: Row }).select ?? unsupported('_count without select');
      const at: Array<[string, number]> = [];
      for (const [relation, wanted] of Object.entries(counted)) {
        if (wanted !== true) unsupported(`_count.${relation}`);
        const field = model.fields.get(relation) ?? unsupported(`${model.name}.${relation}`);
        if (!field.isList) unsupported(`_count of ${model.name}.${relation}`);
        const { target, local, remote } = joinOf(builder, model, field);
        const counting = builder.alias();
        at.push([relation, expressions.length]);
        expressions.push(`(SELECT count(*)::int FROM ${target.table} AS ${counting} WHERE ${counting}.${quote(remote.column)} = ${builder.column(alias, local)})`);
      }
      readers.push((values, start, row) => {
        const counts: Row = {};
        for (const [relation, index] of at) counts[relation] = values[start + index];
        row._count = counts;
      });
      continue;
    }
    const field = model.fields.get(key) ?? unsupported(`${model.name}.${key}`);
    if (field.kind !== 'object') {
      if (value !== true) unsupported(`${model.name}.${key}: ${JSON.stringify(value)}`);
      const { expression, convert } = scalar(builder, alias, field, encoding);
      const index = expressions.length;
      expressions.push(expression);
      readers.push(
        convert
          ? (values, start, row) => {
              row[key] = convert(values[start + index]);
            }
          : (values, start, row) => {
              row[key] = values[start + index];
            },
      );
      continue;
    }
    const { target, local, remote } = joinOf(builder, model, field);
    const relation = value as Row;
    if (!field.isList) {
      // A to-one relation: joined, its columns in its parent's, led by whether it was found.
      if (Object.keys(relation).length !== 1 || typeof relation.select !== 'object') unsupported(`${model.name}.${key} with more than a select`);
      const joined = builder.alias();
      joins.push(`LEFT JOIN ${target.table} AS ${joined} ON ${builder.column(joined, remote)} = ${builder.column(alias, local)}`);
      const found = expressions.length;
      expressions.push(`${joined}.${quote(remote.column)} IS NOT NULL`);
      const nested = shapeOf(builder, target, joined, relation.select as Row, encoding);
      expressions.push(...nested.expressions);
      joins.push(...nested.joins);
      readers.push((values, start, row) => {
        row[key] = values[start + found] ? nested.read(values, start + found + 1) : null;
      });
      continue;
    }
    const index = expressions.length;
    const page = pageOf(builder, target, remote, builder.column(alias, local), relation as unknown as FindManyArgs);
    expressions.push(page.expression);
    readers.push((values, start, row) => {
      row[key] = (values[start + index] as unknown[][]).map((item) => page.shape.read(item, 0));
    });
  }
  if (expressions.length === 0) unsupported(`${model.name}: nothing selected`);
  return {
    expressions,
    joins,
    read(values, start) {
      const row: Row = {};
      for (const reader of readers) reader(values, start, row);
      return row;
    },
  };
}

type Direction = 'asc' | 'desc';

function orderOf(model: Model, orderBy: Row | Row[]): Array<{ field: Field; direction: Direction }> {
  const order: Array<{ field: Field; direction: Direction }> = [];
  for (const part of Array.isArray(orderBy) ? orderBy : [orderBy]) {
    for (const [key, direction] of Object.entries(part)) {
      const field = model.fields.get(key);
      if (!field || field.kind === 'object' || !field.isRequired || (direction !== 'asc' && direction !== 'desc')) {
        return unsupported(`order by ${model.name}.${key}`);
      }
      order.push({ field, direction });
    }
  }
  if (order.length === 0) unsupported('no order');
  return order;
}

const flip = (direction: Direction): Direction => (direction === 'asc' ? 'desc' : 'asc');

function orderClause(builder: Builder, alias: string, order: Array<{ field: Field; direction: Direction }>, backward: boolean) {
  return order.map(({ field, direction }) => `${builder.column(alias, field)} ${(backward ? flip(direction) : direction).toUpperCase()}`).join(', ');
}

/**
 * One of an enum's values, written into the text rather than bound: PostgreSQL then plans each value
 * on its own. Bound, the prepared statement's generic plan is costed for the commonest value, and
 * for a value few rows have it walks the whole table in the list's order filtering them out (a
 * status no stock entry has: every entry read). An enum has few values, so few texts.
 */
function enumLiteral(field: Field, given: unknown): string {
  const values = (enums as unknown as Record<string, Record<string, string> | undefined>)[field.type];
  if (!values || typeof given !== 'string' || !Object.values(values).includes(given)) return unsupported(`${field.name}: ${String(given)} is no ${field.type}`);
  return `'${given.replaceAll("'", "''")}'::"public".${quote(field.type)}`;
}

/** The conditions of a `where` (all must hold). */
function conditionsOf(builder: Builder, model: Model, alias: string, where: Row | undefined): string[] {
  const conditions: string[] = [];
  for (const [key, condition] of Object.entries(where ?? {})) {
    if (condition === undefined) continue;
    if (key === 'AND') {
      for (const part of Array.isArray(condition) ? condition : [condition]) conditions.push(...conditionsOf(builder, model, alias, part as Row));
      continue;
    }
    const field = model.fields.get(key);
    if (!field || field.kind === 'object') return unsupported(`where ${model.name}.${key}`);
    const column = builder.column(alias, field);
    const value = (given: unknown) => (field.kind === 'enum' ? enumLiteral(field, given) : builder.param(given));
    if (condition instanceof Date || Array.isArray(condition)) return unsupported(`where ${model.name}.${key}: ${typeof condition}`);
    if (condition === null) {
      conditions.push(`${column} IS NULL`);
    } else if (typeof condition !== 'object') {
      conditions.push(`${column} = ${value(condition)}`);
    } else {
      const { equals, contains, mode, in: among, ...rest } = condition as Row;
      if (Object.keys(rest).length > 0) return unsupported(`where ${model.name}.${key}: ${Object.keys(rest).join(', ')}`);
      if (among !== undefined) {
        // One of the values (lookups gathered across requests): one parameter, an array of them.
        if (!Array.isArray(among) || field.kind === 'enum' || among.some((item) => item === null || typeof item === 'object')) {
          return unsupported(`where ${model.name}.${key}.in`);
        }
        conditions.push(`${column} = ANY(${builder.param(among)})`);
      }
      if (equals !== undefined) {
        if (typeof equals === 'object' && equals !== null) return unsupported(`where ${model.name}.${key}.equals`);
        conditions.push(equals === null ? `${column} IS NULL` : `${column} = ${value(equals)}`);
      }
      if (contains !== undefined) {
        if (typeof contains !== 'string' || field.type !== 'String' || (mode !== undefined && mode !== 'insensitive' && mode !== 'default')) {
          return unsupported(`where ${model.name}.${key}.contains`);
        }
        // As Prisma writes it: the text goes into the pattern as given (callers escape % and _).
        conditions.push(`${column} ${mode === 'insensitive' ? 'ILIKE' : 'LIKE'} ('%' || ${builder.param(contains)} || '%')`);
      } else if (mode !== undefined) {
        return unsupported(`where ${model.name}.${key}.mode`);
      }
    }
  }
  return conditions;
}

/**
 * LIMIT and OFFSET of a page (a negative take reads backwards), written into the text rather than
 * bound: with a bound LIMIT, PostgreSQL finds its generic plan dearer than a custom one and plans
 * the prepared statement again on every execution (0.14 ms of the pets page's 0.36); with the
 * number in the text it plans once per connection. Page sizes are few (1 to 101), so are the texts.
 */
function limits(take: number | undefined, skip: number | undefined) {
  if (take !== undefined && !Number.isSafeInteger(take)) unsupported('take');
  if (skip !== undefined && (!Number.isSafeInteger(skip) || skip < 0)) unsupported('skip');
  return `${take === undefined ? '' : ` LIMIT ${Math.abs(take)}`}${skip ? ` OFFSET ${skip}` : ''}`;
}

/** Whether a select of `model` joins a to-one relation (its rows are then no longer in the order read). */
function joinsIn(model: Model, select: Row | undefined): boolean {
  return Object.entries(select ?? {}).some(([key, value]) => {
    const field = model.fields.get(key);
    return value !== false && value !== undefined && field?.kind === 'object' && !field.isList;
  });
}

/** Whether a select of `model` reads its own columns alone (no relation, no count). */
function columnsOnly(model: Model, select: Row | undefined): boolean {
  return Object.entries(select ?? {}).every(([key, value]) => value === false || value === undefined || (key !== '_count' && model.fields.get(key)?.kind !== 'object'));
}

/**
 * A to-many relation's page, as one JSON array of arrays: its rows (only the columns the select
 * and the order need, so an index that holds them serves it), then their own relations.
 */
function pageOf(builder: Builder, target: Model, remote: Field, parentColumn: string, args: FindManyArgs): { expression: string; shape: Shape } {
  const { select, where, orderBy, take, skip, ...rest } = args;
  if (Object.keys(rest).length > 0) unsupported(`a related page with ${Object.keys(rest).join(', ')}`);
  const order = orderOf(target, orderBy);
  const backward = take !== undefined && take < 0;
  const rows = builder.alias();
  const page = builder.alias();
  const conditions = [`${builder.column(rows, remote)} = ${parentColumn}`, ...conditionsOf(builder, target, rows, where)];
  const rowsOrder = orderClause(builder, rows, order, backward);
  const pageLimits = limits(take, skip);
  const from = `FROM ${target.table} AS ${rows} WHERE ${conditions.join(' AND ')} ORDER BY ${rowsOrder}${pageLimits}`;
  // Built straight from the rows in the order read where nothing reorders them: an array keeps its
  // subquery's order, where an ordered aggregate sorts its rows again (20 pages of 11 pets: 0.55 → 0.45 ms, pgbench).
  const inOrderRead = !backward && !joinsIn(target, select);
  // A page of columns alone is a two-dimensional text array made JSON in one step: PostgreSQL spends
  // less on it than on a JSON array built for each row (docs/performance.md, Nested lists).
  const ofText = inOrderRead && columnsOnly(target, select);
  const shape = shapeOf(builder, target, inOrderRead ? rows : page, select, ofText ? 'text' : 'json');
  if (shape.expressions.length > 100) unsupported('more than 100 values in a row');
  if (ofText) return { expression: `to_json(ARRAY(SELECT ARRAY[${shape.expressions.join(', ')}] ${from}))`, shape };
  if (inOrderRead) return { expression: `array_to_json(ARRAY(SELECT json_build_array(${shape.expressions.join(', ')}) ${from}))`, shape };
  // The aggregate's own order is the page's, forwards: a backward page is turned round here, as Prisma does.
  const pageOrder = orderClause(builder, page, order, false);
  const columns = [...builder.used.get(page)!].map((column) => `${rows}.${quote(column)}`).join(', ');
  return {
    expression:
      `(SELECT COALESCE(json_agg(json_build_array(${shape.expressions.join(', ')}) ORDER BY ${pageOrder}), '[]'::json)` +
      ` FROM (SELECT ${columns} ${from}) AS ${page}${shape.joins.map((join) => ` ${join}`).join('')})`,
    shape,
  };
}

/** The one statement of a findMany of `model` (a delegate's name: `pet`, `inventoryItem`). */
export function findManyStatement(models: Models, modelName: string, args: FindManyArgs, { withTotalUpTo }: { withTotalUpTo?: number } = {}): Statement {
  const { select, where, orderBy, take, skip, cursor, ...rest } = args;
  if (Object.keys(rest).length > 0) unsupported(`findMany with ${Object.keys(rest).join(', ')}`);
  const builder = new Builder(models);
  const model = models.get(modelName) ?? unsupported(`no model ${modelName}`);
  const root = builder.alias();
  const shape = shapeOf(builder, model, root, select, 'columns');
  const order = orderOf(model, orderBy);
  const backward = take !== undefined && take < 0;
  const conditions = conditionsOf(builder, model, root, where);
  if (cursor) conditions.push(cursorCondition(builder, model, root, cursor, order, backward));
  // The count of the whole list, after the page's columns: an uncorrelated subquery, which PostgreSQL runs once.
  const expressions = withTotalUpTo === undefined ? shape.expressions : [...shape.expressions, totalOf(builder, modelName, model, where, withTotalUpTo)];
  const sql =
    `${STATEMENT_MARK} SELECT ${expressions.map((expression, index) => `${expression} AS "c${index}"`).join(', ')}` +
    ` FROM ${model.table} AS ${root}${shape.joins.map((join) => ` ${join}`).join('')}` +
    `${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}` +
    ` ORDER BY ${orderClause(builder, root, order, backward)}${limits(take, skip)}`;
  return {
    sql,
    params: builder.params,
    decode(rows) {
      const decoded = rows.map((row) => shape.read(row, 0));
      return backward ? decoded.reverse() : decoded;
    },
    total(rows) {
      // count(*) is int8, which pg gives as text.
      return withTotalUpTo !== undefined && rows.length > 0 ? Number(rows[0]![shape.expressions.length]) : undefined;
    },
  };
}

/**
 * How many rows of `model` match `where`, up to `limit`, as a subquery of its own (its own alias and
 * parameters). With no condition (matchesEveryRow, as countOf decides it for Prisma's path), on a
 * table whose count is kept (row-counts.ts), it is that count, read from a few rows. Counting through LIMIT bounds the time a count takes on a large table, but its
 * step costs about a third more per row than count(*) alone. Where the table's statistics
 * (pg_class.reltuples) say it cannot reach the limit before they are taken again, every row is
 * counted without that step: autovacuum analyses a table once 50 rows and a tenth of it have
 * changed (PostgreSQL's defaults), so a table of n rows holds at most n × 1.1 + 50 until then, and
 * the filter can only count fewer. PostgreSQL runs only the branch CASE takes; a table never
 * analysed (reltuples -1) is counted through LIMIT.
 */
function totalOf(builder: Builder, modelName: string, model: Model, where: Row | undefined, limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) unsupported('a count limit');
  const kept = matchesEveryRow(where) ? keptCountExpression(modelName, limit) : undefined;
  if (kept !== undefined) return kept;
  const alias = builder.alias();
  const conditions = conditionsOf(builder, model, alias, where);
  const rows = `FROM ${model.table} AS ${alias}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
  const small = `(SELECT reltuples >= 0 AND reltuples * 1.1 + 50 < ${limit} FROM pg_class WHERE oid = '${model.table.replaceAll("'", "''")}'::regclass)`;
  return `(CASE WHEN ${small} THEN (SELECT count(*) ${rows}) ELSE (SELECT count(*) FROM (SELECT 1 ${rows} LIMIT ${limit}) AS ${builder.alias()}) END)`;
}

/**
 * Prisma's cursor: the rows from the cursor's row on, in the read's direction, by comparing each
 * column of the order with the cursor row's (read by a subquery; a cursor whose row is gone finds
 * nothing). The order must end with the cursor's column, which makes it total.
 */
function cursorCondition(builder: Builder, model: Model, alias: string, cursor: Row, order: Array<{ field: Field; direction: Direction }>, backward: boolean) {
  const entries = Object.entries(cursor);
  if (entries.length !== 1) return unsupported('a cursor of several columns');
  const [key, value] = entries[0]!;
  const field = model.fields.get(key);
  if (!field?.isId || order.at(-1)?.field !== field) return unsupported(`cursor ${model.name}.${key}`);
  const at = builder.param(value);
  const cursorRow = builder.alias();
  const of = (column: Field) => `(SELECT ${cursorRow}.${quote(column.column)} FROM ${model.table} AS ${cursorRow} WHERE ${cursorRow}.${quote(field.column)} = ${at})`;
  const alternatives = order.map(({ field: ordered, direction }, index) => {
    const forwards = (direction === 'asc') !== backward;
    const last = index === order.length - 1;
    const before = order.slice(0, index).map((earlier) => `${builder.column(alias, earlier.field)} = ${of(earlier.field)}`);
    return [...before, `${builder.column(alias, ordered)} ${forwards ? '>' : '<'}${last ? '=' : ''} ${of(ordered)}`].join(' AND ');
  });
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.map((alternative) => `(${alternative})`).join(' OR ')})`;
}

const modelsByClient = new WeakMap<PrismaClient, Models | null>();

/**
 * The statement of our own for a findMany through `prisma` (the primary's client or a replica's),
 * or undefined when the read is one Prisma must make. Its text is built once per structure of the
 * read (statement-templates.ts).
 */
export function statementFor(prisma: PrismaClient, modelName: string, args: FindManyArgs, options: { withTotalUpTo?: number } = {}): Statement | undefined {
  const models = modelsFor(prisma);
  if (!models) return undefined;
  const templates = directAccessOf(prisma)?.templates;
  const build = () => built(models, modelName, args, options);
  return templates ? templates.statementOf(`${modelName} ${options.withTotalUpTo ?? ''}`, args, build) : build();
}

/** The client's models, read once per client; undefined when its Prisma does not hold them. */
function modelsFor(prisma: PrismaClient): Models | undefined {
  let models = modelsByClient.get(prisma);
  if (models === undefined) modelsByClient.set(prisma, (models = modelsOf(prisma) ?? null));
  return models ?? undefined;
}

function built(models: Models, modelName: string, args: FindManyArgs, options: { withTotalUpTo?: number }): Statement | undefined {
  try {
    return findManyStatement(models, modelName, args, options);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/** A findMany by the statement of our own where there is one (on the client's pool, runOnPool), else by Prisma. */
export async function findMany(prisma: PrismaClient, modelName: string, args: FindManyArgs, viaPrisma: () => Promise<Row[]>): Promise<Row[]> {
  const statement = directAccessOf(prisma) && statementFor(prisma, modelName, args);
  const rows = statement && runOnPool<unknown[]>(prisma, statement.sql, statement.params, 'array');
  return rows ? statement.decode(await rows) : viaPrisma();
}

/**
 * A page and the count of its whole list (of at most `countUpTo` rows) in one statement where there
 * is one of our own: one connection and one round trip, where the two reads side by side took two
 * connections at once (under load, twice the requests waiting for one). An empty page carries no
 * count: it is counted on its own. Otherwise both through Prisma, side by side.
 */
export async function findManyWithTotal(
  prisma: PrismaClient,
  modelName: string,
  args: FindManyArgs,
  viaPrisma: { rows: () => Promise<Row[]>; total: () => Promise<number> },
  countUpTo: number,
): Promise<{ rows: Row[]; total: number }> {
  const statement = directAccessOf(prisma) && statementFor(prisma, modelName, args, { withTotalUpTo: countUpTo });
  const pending = statement && runOnPool<unknown[]>(prisma, statement.sql, statement.params, 'array');
  if (!pending) {
    const [rows, total] = await Promise.all([viaPrisma.rows(), viaPrisma.total()]);
    return { rows, total };
  }
  const found = await pending;
  return { rows: statement.decode(found), total: statement.total(found) ?? (await viaPrisma.total()) };
}
