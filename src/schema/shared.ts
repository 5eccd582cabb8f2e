import type { StabilityLevel } from '../builder.js';
import { checkPageSize, type PageArgs, pageSize } from '../pothos-plugins/paging.js';

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
 */
export function stability(level: StabilityLevel, description: string) {
  return {
    description: `${stabilityWord[level]}: ${description}`,
    directives: { stability: { level } },
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
} as const;
