import type { ObjectRef, SchemaTypes } from '@pothos/core';
import { builder, type StabilityLevel } from '../builder.js';
import { checkPageSize, COUNT_LIMIT, type PageArgs, pageSize, toldCount } from '../pothos-plugins/paging.js';
import { COUNT, costs } from '../pothos-plugins/cost.js';
import { plannedRelatedList } from './plans.js';

/** Every list's page sizes: 20 unless asked, at most 100 (the arguments are checked by the paging plugin). */
export const pageSizes = { defaultSize: pageSize.default, maxSize: pageSize.max } as const;

/**
 * An int64 column served as an `ID`: decimal text, exact above 2^53 (graphql-js'
 * ID scalar cannot serialise a bigint).
 */
export function int64Id<Column extends string>(column: Column, description: string) {
  return { type: 'ID' as const, description, resolve: (row: Record<Column, bigint>) => row[column].toString() };
}

const stabilityWord: Record<StabilityLevel, string> = { BETA: 'BETA', EXPERIMENTAL: 'EXPERIMENTAL' };

/**
 * The options that mark a field's stability: the `@stability` directive for
 * tools, and the same word leading the description for people in GraphiQL.
 * In the subgraph schema the level is also a federation `@tag` (`beta`,
 * `experimental`): a router's contract variant can leave unstable fields out
 * of a supergraph by tag, where our own directive is not composed.
 */
export function stability(level: StabilityLevel, description: string) {
  return {
    description: `${stabilityWord[level]}: ${description}`,
    directives: { stability: { level } },
    tag: level.toLowerCase(),
  } as const;
}

/**
 * The paging of a list relation (a category's pets, a pet's orders): by id,
 * oldest first, 20 to a page unless asked, at most 100, with totalCount.
 */
export const pagedById = {
  cursor: 'id',
  ...pageSizes,
  totalCount: true,
  // Checked here too: the relation is loaded with its parent's query, before its own field resolves.
  query: (args: PageArgs) => {
    checkPageSize(args);
    return { orderBy: { id: 'asc' as const } };
  },
  ...plannedRelatedList('id', () => ({ orderBy: { id: 'asc' } })),
} as const;

/** The builder's own schema types. */
type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types extends SchemaTypes> ? Types : never;

/**
 * The one connection type of a node type, shared by every list of it, named as Relay and the
 * APIs people know name them: `PetConnection` with `PetEdge`, for `Query.pets` and
 * `Category.pets` alike. Each has `edges`, `nodes` (the relay plugin's `nodesOnConnection`),
 * `pageInfo` and `totalCount`. The Prisma plugin gives the connection its total either counted
 * with the page (a relation's `_count`) or as a function (a root list's count query), run only
 * when `totalCount` is asked for.
 */
export function sharedConnection<Node extends object>(node: ObjectRef<BuilderTypes, Node>, name: string, items: string) {
  return builder.connectionObject({
    type: node,
    name: `${name}Connection`,
    description: `One page of a list of ${items}, with its edges, its nodes and where it stands.`,
    fields: (t) => ({
      totalCount: t.int({
        description: `How many items the whole list has (with its filter), across all pages, counted up to ${COUNT_LIMIT.toLocaleString('en-US')}: a longer list says ${COUNT_LIMIT.toLocaleString('en-US')}, and totalCountPrecision AT_LEAST.`,
        ...costs(COUNT),
        // Tells the Prisma plugin a request selecting only this needs no rows.
        extensions: { pothosPrismaTotalCount: true },
        resolve: async (connection) => toldCount(await countedOf(connection)).count,
      }),
      totalCountPrecision: t.field({
        type: CountPrecision,
        description: 'Whether totalCount is the exact length of the list, or the list has at least that many.',
        ...costs(COUNT),
        extensions: { pothosPrismaTotalCount: true },
        resolve: async (connection) => toldCount(await countedOf(connection)).precision,
      }),
    }),
  });
}

const CountPrecision = builder.enumType('CountPrecision', {
  description: 'How exact a count is.',
  values: {
    EXACT: { description: 'The count is exact.' },
    AT_LEAST: { description: `The list has at least this many: counting stopped at ${COUNT_LIMIT.toLocaleString('en-US')}.` },
  } as const,
});

/**
 * The count a connection was given by the Prisma plugin: a relation's `_count` (a number), or a
 * root list's count (a function, countOf), run once however many of its fields ask.
 */
const counts = new WeakMap<object, Promise<number>>();
function countedOf(connection: object): Promise<number> {
  let counted = counts.get(connection);
  if (!counted) {
    const { totalCount } = connection as { totalCount?: number | (() => number | Promise<number>) };
    counted = Promise.resolve(typeof totalCount === 'function' ? totalCount() : (totalCount ?? 0));
    counts.set(connection, counted);
  }
  return counted;
}
