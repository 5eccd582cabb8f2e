import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import { MAX_INT64 } from '../domain/ids.js';
import { validationFailed } from '../errors.js';

/** Page sizes of every connection: 20 unless asked, never more than 100. */
export const pageSize = { default: 20, max: 100 } as const;

/**
 * The most rows a connection's totalCount counts: its time is bounded by this, not by the data.
 * A list with more says this many, with precision AT_LEAST.
 */
export const COUNT_LIMIT = 100_000;

/** The most rows a count reads: one past the limit, to know there are more. */
export const COUNTED_ROWS = COUNT_LIMIT + 1;

export type CountPrecision = 'EXACT' | 'AT_LEAST';

/**
 * What a connection tells of a count made of at most COUNTED_ROWS rows (or of all of them, as a
 * relation's count is): its totalCount and totalCountPrecision, the same for every engine.
 */
export function toldCount(counted: number): { count: number; precision: CountPrecision } {
  return counted > COUNT_LIMIT ? { count: COUNT_LIMIT, precision: 'AT_LEAST' } : { count: counted, precision: 'EXACT' };
}

export interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

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
 * The arguments of every connection: one direction (first or last), more than
 * the maximum page refused, not silently cut short, and a cursor must be one
 * this API handed out.
 */
export function checkPageSize(args: PageArgs): void {
  // Both at once took its size from first and its direction from last (first: 5, last: 1 gave the
  // list's last five): refused as the other combinations that page two ways are.
  if (args.first != null && args.last != null) {
    throw validationFailed('last', 'Ask for first (forward, with after) or last (backward, with before), not both.');
  }
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

const connectionArguments = ['first', 'last', 'after', 'before'];

/**
 * A Pothos plugin that checks the paging arguments of every connection field
 * (any field taking first, last, after and before) before its resolver runs:
 * the rule is declared once, here, for every connection there is or will be.
 * Whether the client asks for the page, its totalCount or both, it is checked
 * once. Other fields keep their resolver untouched.
 */
export class PagingPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (!connectionArguments.every((name) => name in fieldConfig.args)) return resolver;
    return (parent, args, context, info) => {
      checkPageSize(args);
      return resolver(parent, args, context, info);
    };
  }
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Pothos registers plugins by merging into its namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      paging: PagingPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('paging', PagingPlugin);
