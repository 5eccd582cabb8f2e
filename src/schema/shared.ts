import type { StabilityLevel } from '../builder.js';
import { validationFailed } from '../errors.js';

/** Page sizes of every connection: 20 unless asked, never more than 100. */
export const pageSize = { default: 20, max: 100 } as const;

interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

const MAX_INT64 = 2n ** 63n - 1n;

/**
 * Whether `cursor` is one this API issues: every list here is keyed by an
 * int64 id, which the Prisma plugin writes as base64 of `GPC:I:<id>`. Anything
 * else (a forged or foreign cursor) would otherwise reach the database as a
 * wrongly typed value and fail there as an internal error.
 */
function isIssuedCursor(cursor: string): boolean {
  const match = /^GPC:I:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match !== null && BigInt(match[1]!) <= MAX_INT64;
}

/**
 * The arguments of every connection: more than the maximum page is refused,
 * not silently cut short, and a cursor must be one this API handed out.
 */
export function checkPageSize(args: PageArgs): void {
  for (const field of ['first', 'last'] as const) {
    const value = args[field];
    if (value === null || value === undefined) continue;
    if (value < 0 || value > pageSize.max) {
      throw validationFailed(field, `${field} must be between 0 and ${pageSize.max}, got ${value}.`);
    }
  }
  for (const field of ['after', 'before'] as const) {
    const cursor = args[field];
    if (cursor === null || cursor === undefined) continue;
    if (!isIssuedCursor(cursor)) {
      throw validationFailed(field, `${field} is not a cursor from this list; use a cursor from pageInfo or an edge.`);
    }
  }
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
  defaultSize: pageSize.default,
  maxSize: pageSize.max,
  totalCount: true,
  query: (args: PageArgs) => {
    checkPageSize(args);
    return { orderBy: { id: 'asc' as const } };
  },
} as const;
