import type { PrismaClient } from './client.js';
import { forNoRequestInParticular } from './cancellation.js';
import { findMany } from './find-many.js';

type Row = Record<string, unknown>;

/**
 * One row by a unique key (`{ id: 7n }`, `{ petId: 7n }`), read together with every other read of
 * the same model, key and select that arrives in the same turn of the event loop, from any request:
 * one statement of the gateway's own (`WHERE "id" = ANY($1)`, find-many.ts) for all of them, where
 * Prisma's findUnique calls gathered the same way cost its request pipeline for each. Each read gets
 * its own row, or null. The statement serves several requests, so one of them reaching its time
 * limit does not cancel it. A read the statements do not cover goes through Prisma's findUnique.
 */
export function findByKey(prisma: PrismaClient, model: string, select: Row, where: Row): Promise<Row | null> {
  const keys = Object.entries(where);
  if (keys.length !== 1 || typeof keys[0]![1] === 'object') return delegateOf(prisma, model).findUnique({ select, where });
  const [column, key] = keys[0]!;
  let batches = pending.get(prisma);
  if (!batches) pending.set(prisma, (batches = new Map()));
  const name = `${model}\n${column}\n${selectKey(select)}`;
  let batch = batches.get(name);
  if (!batch) {
    batch = { model, column, select, reads: [] };
    batches.set(name, batch);
    if (batches.size === 1) setImmediate(() => flush(prisma));
  }
  return new Promise((resolve, reject) => batch.reads.push({ key, where, resolve, reject }));
}

interface Batch {
  model: string;
  column: string;
  select: Row;
  reads: Array<{ key: unknown; where: Row; resolve(row: Row | null): void; reject(error: unknown): void }>;
}

const pending = new WeakMap<PrismaClient, Map<string, Batch>>();

function flush(prisma: PrismaClient) {
  const batches = pending.get(prisma);
  pending.delete(prisma);
  for (const batch of batches?.values() ?? []) void forNoRequestInParticular(() => read(prisma, batch));
}

async function read(prisma: PrismaClient, { model, column, select, reads }: Batch) {
  const keys = [...new Set(reads.map((one) => one.key))];
  // The key is read too, to give each read its row.
  const query = { select: { ...select, [column]: true }, where: { [column]: { in: keys } }, orderBy: { [column]: 'asc' } };
  try {
    const rows = await findMany(prisma, model, query, () => Promise.all(reads.map((one) => delegateOf(prisma, model).findUnique({ select: query.select, where: one.where }))).then((found) => found.filter((row): row is Row => row !== null)));
    const byKey = new Map(rows.map((row) => [String(row[column]), row]));
    for (const one of reads) one.resolve(byKey.get(String(one.key)) ?? null);
  } catch (error) {
    for (const one of reads) one.reject(error);
  }
}

/**
 * The select as text, to tell batches apart. JSON.stringify takes its fast path only without a
 * replacer; a select holding a related page's cursor (a BigInt, which JSON has no number for) makes
 * it throw, and is written with one.
 */
function selectKey(select: Row): string {
  try {
    return JSON.stringify(select);
  } catch {
    return JSON.stringify(select, bigIntsAsText);
  }
}

const bigIntsAsText = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value);

const delegateOf = (prisma: PrismaClient, model: string) =>
  prisma[model as 'pet'] as unknown as { findUnique(args: unknown): Promise<Row | null> };
