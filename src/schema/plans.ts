import type { PrismaClient } from '../database/client.js';
import { keptCount, matchesEveryRow } from '../database/row-counts.js';
import type { ChangeDeclaration } from '../domain/changes.js';
import type { EventPublisher } from '../domain/events.js';
import { COUNTED_ROWS, pageSize } from '../pothos-plugins/paging.js';

/**
 * What a read field does, declared beside it so that query plans
 * (src/http/query-plans/) can run it without calling its resolver: the
 * Prisma model it reads, and the `where`/`orderBy` its arguments make. The
 * field's own resolver is built from the same declaration (`read`), so the
 * two cannot drift; a test runs every document both ways and compares. A
 * plannable mutation declares its domain write the same way (`plannedWrite`).
 */
export type Model = 'pet' | 'category' | 'order' | 'inventoryItem';

/** Arguments as the resolver gets them (ids already parsed to bigints by the int64 plugin). */
export type ReadArgs = Record<string, unknown>;

export interface ListRead {
  where?: Record<string, unknown>;
  orderBy: Record<string, unknown> | Array<Record<string, unknown>>;
}

export type PlannedRead =
  | {
      kind: 'list';
      /** The model of a root list; a relation's list reads through its parent's select. */
      model?: Model;
      /** The column its cursors are made of. */
      cursor: string;
      defaultSize: number;
      maxSize: number;
      read: (args: ReadArgs) => ListRead;
    }
  | {
      kind: 'lookup';
      model: Model;
      where: (args: ReadArgs) => Record<string, unknown>;
      /** Read together with other requests' lookups in one statement (src/domain/lookups.ts). */
      batched: boolean;
    }
  | {
      /**
       * Objects of any of the field's possible types, each named by its type and key: node(id:) and
       * nodes(ids:) by global ids (src/pothos-plugins/global-ids.ts), `_entities` by a router's
       * representations (src/schema/federation.ts). Each is read by the key its Node type declares.
       */
      kind: 'node';
      list: boolean;
      /** The objects the arguments name, in their order; throws what the field's resolver would refuse. */
      named: (args: ReadArgs) => NamedObject[];
    };

/** An object named by its type and its key's value (an int64, as text). */
export interface NamedObject {
  typename: string;
  id: string;
}

/** A root list (a connection) of `model`, paged by `cursor`, with the where and order its arguments make. */
export function plannedList<Args>(model: Model, cursor: string, read: (args: Args) => ListRead) {
  const planned: PlannedRead = { kind: 'list', model, cursor, defaultSize: pageSize.default, maxSize: pageSize.max, read: read as (args: ReadArgs) => ListRead };
  return { read, extensions: { plannedRead: planned } };
}

/** A related list (a relation's connection), paged by `cursor`, in the order `read` gives. */
export function plannedRelatedList(cursor: string, read: (args: ReadArgs) => ListRead) {
  const planned: PlannedRead = { kind: 'list', cursor, defaultSize: pageSize.default, maxSize: pageSize.max, read };
  return { extensions: { plannedRead: planned } };
}

/** A root lookup of one row of `model` by the unique `where` its arguments make. */
export function plannedLookup<Args, Where extends Record<string, unknown>>(
  model: Model,
  where: (args: Args) => Where,
  { batched }: { batched: boolean },
) {
  const planned: PlannedRead = { kind: 'lookup', model, where: where as (args: ReadArgs) => Record<string, unknown>, batched };
  return { where, extensions: { plannedRead: planned } };
}

/** What a write needs of the request: the primary's client, and where its events go. */
export interface WriteContext {
  prisma: PrismaClient;
  events: EventPublisher;
}

/**
 * A mutation a plan can run (src/http/query-plans/): the domain's write, called with the field's
 * arguments. The field's resolver calls the same function, with the relations its selection loads;
 * a plan, which answers only the row's own fields, with none.
 */
export interface PlannedWrite {
  write: (args: ReadArgs, context: WriteContext) => Promise<Record<string, unknown>>;
}

/**
 * A plannable mutation field's declaration: its write, and what it changes (the response cache
 * and live queries read that, src/domain/changes.ts). Spread `extensions` into the field.
 */
export function plannedWrite<Args, Loading, Row extends object>(
  changes: ChangeDeclaration,
  write: (args: Args, context: WriteContext, loading?: Loading) => Promise<Row>,
) {
  const planned: PlannedWrite = { write: (args, context) => write(args as Args, context) as Promise<Record<string, unknown>> };
  return { write, extensions: { changes, plannedWrite: planned } };
}

/** The Prisma delegate of a model, for the plans' reads. */
export function delegateOf(prisma: PrismaClient, model: Model) {
  return prisma[model] as unknown as {
    findMany(args: unknown): Promise<Array<Record<string, unknown>>>;
    findUnique(args: unknown): Promise<Record<string, unknown> | null>;
    count(args: unknown): Promise<number>;
  };
}

/**
 * A root list's count for its totalCount: the table's kept count when the list has no filter
 * (src/database/row-counts.ts), else of at most COUNTED_ROWS rows, so that it costs what that many
 * rows cost however long the list is (toldCount says what a count over the limit tells).
 */
export async function countOf(prisma: PrismaClient, model: Model, where: ListRead['where']): Promise<number> {
  const kept = matchesEveryRow(where) ? await keptCount(prisma, model, COUNTED_ROWS) : undefined;
  return kept ?? delegateOf(prisma, model).count({ where, take: COUNTED_ROWS });
}
