import type { PrismaClient } from './client.js';

/**
 * The tables whose length triggers keep in `row_counts` (prisma/migrations/*_row_counts), by the
 * Prisma model that reads each: a list of one of them without a filter is counted as the sum of its
 * column there (a few rows, by index) instead of row by row, so its count costs the same at any length.
 * Kept in the writing transaction, so a statement reading it sees exactly the rows its snapshot sees.
 */
const KEPT_COUNTS: Readonly<Record<string, string>> = {
  category: 'categories',
  pet: 'pets',
  order: 'orders',
  inventoryItem: 'inventory_items',
};

/** Whether a read's `where` lets every row through (it states no condition). */
export function matchesEveryRow(where: Record<string, unknown> | undefined): boolean {
  return where === undefined || Object.values(where).every((condition) => condition === undefined);
}

/**
 * The kept count of `model`'s table as a SQL expression (int8), told as a bounded count would tell it:
 * at most `limit`. Undefined when the table's count is not kept.
 */
export function keptCountExpression(model: string, limit: number): string | undefined {
  const column = KEPT_COUNTS[model];
  if (column === undefined) return undefined;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`a count limit of ${limit}`);
  return `(SELECT LEAST(sum(${column}), ${limit})::int8 FROM row_counts)`;
}

/** The kept count of `model`'s table, at most `limit`, read through Prisma; undefined when it is not kept. */
export async function keptCount(prisma: PrismaClient, model: string, limit: number): Promise<number | undefined> {
  const expression = keptCountExpression(model, limit);
  if (expression === undefined) return undefined;
  const [row] = await prisma.$queryRawUnsafe<Array<{ count: bigint | number | null }>>(`SELECT ${expression} AS count`);
  return Number(row?.count ?? 0);
}
