import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { directAccessOf } from '../../src/database/client.js';
import { findMany, type FindManyArgs, findManyStatement, findManyWithTotal, modelsOf, statementFor } from '../../src/database/find-many.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * The statements of the gateway's own (src/database/find-many.ts) read the rows Prisma's findMany
 * would, for the same arguments: generated selects (columns, to-one relations, related pages
 * forwards and backwards, counts), filters, orders, pages and cursors (of rows that exist and of
 * one that does not), each read both ways on one database and compared row for row. What the
 * statements do not cover must go to Prisma rather than be read wrongly.
 */

const gateway = useTestGateway({ queryPlans: false });
/** Times read as milliseconds: the first and last of the years the API writes, and either side of 1970. */
const shipDates = ['2026-06-01T12:30:15.123Z', '0001-01-01T00:00:00.001Z', '9999-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.001Z'];
const petIds: bigint[] = [];
const categoryIds: bigint[] = [];

beforeAll(async () => {
  for (let c = 0; c < 3; c++) {
    const category = await gateway.prisma.category.create({ data: { name: `Statement kind ${c}`, description: c === 1 ? null : `Kind ${c}` } });
    categoryIds.push(category.id);
    for (let p = 0; p < 6; p++) {
      const pet = await gateway.prisma.pet.create({
        // Names repeat across categories: ordering by name needs the id to break ties.
        data: { name: p % 2 ? `Same ${p % 3}` : `Pet_${c}%${p}`, categoryId: category.id, status: p % 3 === 0 ? 'sold' : 'available' },
      });
      petIds.push(pet.id);
      if (p % 2 === 0) await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: p, status: 'available' } });
      for (let o = 0; o < p % 4; o++) {
        await gateway.prisma.order.create({ data: { petId: pet.id, quantity: o + 1, complete: o === 1, shipDate: o === 1 ? new Date(shipDates[(c * 6 + p) % shipDates.length]!) : null } });
      }
    }
  }
});

const direction = fc.constantFrom('asc' as const, 'desc' as const);
const subset = <T>(items: T[]) => fc.subarray(items, { minLength: 1 });
const selectOf = (columns: string[]) => subset(columns).map((chosen) => Object.fromEntries(chosen.map((column) => [column, true])));

const orderPage = fc.record({
  select: selectOf(['id', 'petId', 'quantity', 'shipDate', 'complete', 'createdAt']),
  orderBy: direction.map((way) => ({ id: way })),
  take: fc.integer({ min: -4, max: 4 }).filter((take) => take !== 0),
  skip: fc.constantFrom(0, 0, 1),
});

const petSelect = fc
  .tuple(
    selectOf(['id', 'name', 'categoryId', 'status', 'createdAt', 'updatedAt']),
    fc.option(selectOf(['id', 'name', 'description', 'createdAt']), { nil: undefined }),
    fc.option(selectOf(['petId', 'quantity', 'status', 'updatedAt']), { nil: undefined }),
    fc.option(orderPage, { nil: undefined }),
    fc.boolean(),
  )
  .map(([columns, category, inventory, orders, countOrders]) => ({
    ...columns,
    ...(category ? { category: { select: category } } : {}),
    ...(inventory ? { inventory: { select: inventory } } : {}),
    ...(orders ? { orders } : {}),
    ...(countOrders ? { _count: { select: { orders: true } } } : {}),
  }));

// Arbitraries run after beforeAll: the ids are there by then.
const petWhere = fc.record(
  {
    status: fc.constantFrom('available', 'sold', 'pending'),
    // A category that exists, or one that does not.
    categoryId: fc.oneof(
      fc.nat(3).map((index) => ({ equals: categoryIds[index] ?? 999_999n })),
      // Lookups gathered across requests read by `in`; some of the ids have no row, some repeat.
      fc.subarray([0, 1, 2, 3, 0]).map((picked) => ({ in: picked.map((index) => categoryIds[index] ?? 999_999n) })),
    ),
    name: fc.constantFrom({ contains: 'same', mode: 'insensitive' }, { contains: 'Pet\\_0' }, { contains: '%', mode: 'insensitive' }),
  },
  { requiredKeys: [] },
);

const petArgs = fc
  .tuple(petSelect, petWhere, fc.constantFrom('id', 'name'), direction, fc.integer({ min: -5, max: 5 }).filter((take) => take !== 0), fc.option(fc.nat(20), { nil: undefined }))
  .map(([select, where, by, way, take, cursorAt]): FindManyArgs => ({
    select,
    where,
    orderBy: by === 'name' ? [{ name: way }, { id: way }] : [{ id: way }],
    take,
    ...(cursorAt === undefined ? { skip: 0 } : { skip: 1, cursor: { id: petIds[cursorAt] ?? 999_999n } }),
  }));

/** A read with each value a statement binds changed (ids, lists of ids, searched texts), its structure kept. */
function otherValues(value: unknown, bound = false, key = ''): unknown {
  if (typeof value === 'bigint') return bound ? value + 1_000n : value;
  if (typeof value === 'string') return bound && key === 'contains' ? `${value}x` : value;
  if (Array.isArray(value)) return value.map((item) => otherValues(item, bound, key));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, otherValues(item, bound || name === 'where' || name === 'cursor', name)]));
}

/** A node of PostgreSQL's EXPLAIN (FORMAT JSON), and every node beneath it, InitPlans included. */
interface PlanNode {
  'Node Type': string;
  'Actual Loops': number;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe('the gateway\'s own statements', () => {
  it('read what Prisma\'s findMany reads, for generated arguments', { timeout: 120_000 }, async () => {
    let compared = 0;
    let capped = 0;
    await fc.assert(
      fc.asyncProperty(petArgs, async (args) => {
        expect(statementFor(gateway.prisma, 'pet', args), JSON.stringify(args, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value))).toBeDefined();
        const prisma = await gateway.prisma.pet.findMany(args as Parameters<typeof gateway.prisma.pet.findMany>[0]);
        const own = await findMany(gateway.prisma, 'pet', args, () => Promise.reject(new Error('read through Prisma')));
        expect(own).toEqual(prisma);
        // The page with the count of its whole list, up to a limit (here 4 rows of the 18), in one statement;
        // an empty page is counted on its own.
        const count = await gateway.prisma.pet.count({ where: args.where, take: 4 } as Parameters<typeof gateway.prisma.pet.count>[0]);
        let countedApart = false;
        const withTotal = await findManyWithTotal(
          gateway.prisma,
          'pet',
          args,
          {
            rows: () => Promise.reject(new Error('read through Prisma')),
            total: async () => {
              countedApart = true;
              return count;
            },
          },
          4,
        );
        expect(withTotal).toEqual({ rows: prisma, total: count });
        if (count === 4) capped++;
        expect(countedApart).toBe(prisma.length === 0);
        compared++;
      }),
      { numRuns: 200, seed: 20261127 },
    );
    expect(compared).toBe(200);
    // Lists longer than the limit were met, and counted only that far.
    expect(capped).toBeGreaterThan(20);
  });

  it('read the page after a cursor as Prisma reads it, the cursor\'s row there or gone', async () => {
    // Three more orders, the middle one deleted: a cursor whose row is gone, with rows on both sides of it.
    const made = async () => (await gateway.prisma.order.create({ data: { petId: petIds[0]!, quantity: 1 } })).id;
    const [before, gone, after] = [await made(), await made(), await made()];
    await gateway.prisma.order.delete({ where: { id: gone } });
    const ids = (await gateway.prisma.order.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map((order) => order.id);
    const cursors = [ids[0]!, ids[2]!, before, gone, after, 0n, 999_999n];
    const total = await gateway.prisma.order.count({ take: 4 });
    const read = () => Promise.reject(new Error('read through Prisma'));
    let compared = 0;
    for (const id of cursors) {
      for (const way of ['asc', 'desc'] as const) {
        for (const take of [-3, -1, 2, 5]) {
          for (const skip of [0, 1, 2]) {
            const args: FindManyArgs = { select: { quantity: true, complete: true }, orderBy: { id: way }, cursor: { id }, take, skip };
            expect(statementFor(gateway.prisma, 'order', args)).toBeDefined();
            const prisma = await gateway.prisma.order.findMany(args as Parameters<typeof gateway.prisma.order.findMany>[0]);
            expect(await findMany(gateway.prisma, 'order', args, read), JSON.stringify({ id: String(id), way, take, skip })).toEqual(prisma);
            expect(await findManyWithTotal(gateway.prisma, 'order', args, { rows: read, total: async () => total }, 4)).toEqual({ rows: prisma, total });
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(cursors.length * 2 * 4 * 3);
  });

  it("read a page of pets in any of the API's orders and filters from an index in that order, sorting nothing", async () => {
    // The where and order pets(filter:, orderBy:) makes of its arguments (src/schema/pet.ts), each as the plan reads it.
    const orders = [[{ id: 'asc' }], [{ id: 'desc' }], [{ name: 'asc' }, { id: 'asc' }], [{ name: 'desc' }, { id: 'desc' }]];
    const filters = [{}, { categoryId: categoryIds[1] }, { status: 'sold' }, { categoryId: categoryIds[1], status: 'available' }];
    const sorts: string[] = [];
    const named = (read: object) => JSON.stringify(read, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    await gateway.prisma.$transaction(async (tx) => {
      // A plan that needs a sort is priced out, so one is chosen only where no index gives the order.
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
      await tx.$executeRawUnsafe('SET LOCAL enable_incremental_sort = off');
      for (const orderBy of orders) {
        for (const where of filters) {
          const statement = statementFor(gateway.prisma, 'pet', { select: { id: true, name: true, status: true }, where, orderBy, take: 21 })!;
          expect(statement, named({ where, orderBy })).toBeDefined();
          const [explained] = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': unknown }>>(`EXPLAIN (FORMAT JSON) ${statement.sql}`, ...statement.params);
          const plan = explained!['QUERY PLAN'];
          if (JSON.stringify(plan).includes('Sort"')) sorts.push(named({ where, orderBy }));
        }
      }
    });
    expect(sorts).toEqual([]);
  });

  it('read a page of stock entries of any status from an index holding both the status and the order, filtering and sorting nothing', async () => {
    // inventory(filter: { status }) in pet order (src/schema/inventory.ts): a plan that walked the
    // primary key and filtered the status would read every entry for a status few entries have.
    const found: string[] = [];
    await gateway.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
      await tx.$executeRawUnsafe('SET LOCAL enable_incremental_sort = off');
      for (const status of ['available', 'pending', 'sold']) {
        for (const petId of ['asc', 'desc']) {
          const statement = statementFor(gateway.prisma, 'inventoryItem', { select: { petId: true, quantity: true, status: true }, where: { status }, orderBy: { petId }, take: 21 })!;
          const [explained] = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': unknown }>>(`EXPLAIN (FORMAT JSON) ${statement.sql}`, ...statement.params);
          const plan = explained!['QUERY PLAN'];
          const text = JSON.stringify(plan);
          if (text.includes('Sort"') || text.includes('"Filter"')) found.push(`${status} ${petId}: ${text}`);
        }
      }
    });
    expect(found).toEqual([]);
  });

  it('count a list through LIMIT only where the table may reach the limit before it is analysed again', async () => {
    // What ran of each branch of the count (src/database/find-many.ts totalOf): the LIMIT's step, or count(*) alone.
    const branchesRun = async (limit: number, where: Record<string, unknown>) =>
      gateway.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('ANALYZE orders');
        const statement = statementFor(gateway.prisma, 'order', { select: { id: true }, where, orderBy: { id: 'asc' }, take: 2 }, { withTotalUpTo: limit })!;
        const [explained] = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, ...statement.params);
        // The count's LIMIT sits under its aggregate; the page's is the statement's own.
        const counts = nodesOf(explained!['QUERY PLAN'][0]!.Plan).filter((node) => node['Node Type'] === 'Aggregate');
        const limitSteps = counts.flatMap(nodesOf).filter((node) => node['Node Type'] === 'Limit');
        return { throughLimit: limitSteps.some((node) => node['Actual Loops'] > 0) };
      });
    const [{ rows }] = await gateway.prisma.$queryRawUnsafe<[{ rows: number }]>('SELECT count(*)::int AS rows FROM orders');
    const where = { petId: { in: petIds } };
    const exact = await gateway.prisma.order.count({ where });
    expect(exact).toBeGreaterThan(2);
    const counted = (limit: number) =>
      findManyWithTotal(gateway.prisma, 'order', { select: { id: true }, where, orderBy: { id: 'asc' }, take: 2 }, { rows: () => Promise.reject(new Error('read through Prisma')), total: () => Promise.reject(new Error('counted through Prisma')) }, limit);
    // A limit far above what the table holds: every row counted, without the LIMIT's step.
    const roomy = 10 * (rows + 10);
    expect(await branchesRun(roomy, where)).toEqual({ throughLimit: false });
    expect((await counted(roomy)).total).toBe(exact);
    // A limit below what the table holds: counted through LIMIT, only that far.
    expect(await branchesRun(2, where)).toEqual({ throughLimit: true });
    expect((await counted(2)).total).toBe(2);
  });

  it('read every time column to the millisecond, the precision each of them has', async () => {
    // The statements read a time as a float8 of milliseconds, rounded (find-many.ts): exact for
    // milliseconds, not for a column that keeps microseconds.
    const finer = await gateway.prisma.$queryRawUnsafe<Array<{ column: string }>>(
      `SELECT table_name || '.' || column_name AS column FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' AND data_type LIKE 'timestamp%'
          AND (datetime_precision IS NULL OR datetime_precision > 3)`,
    );
    expect(finer).toEqual([]);
    const times = await gateway.prisma.$queryRawUnsafe<Array<{ count: bigint }>>(
      `SELECT count(*) AS count FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' AND data_type LIKE 'timestamp%'`,
    );
    expect(Number(times[0]!.count)).toBeGreaterThan(5);
  });

  it('are built once per structure of a read, each read binding its own values', () => {
    const models = modelsOf(gateway.prisma)!;
    const templates = directAccessOf(gateway.prisma)!.templates;
    let reused = 0;
    fc.assert(
      fc.property(petArgs, fc.constantFrom(undefined, 4), (args, withTotalUpTo) => {
        const options = withTotalUpTo === undefined ? {} : { withTotalUpTo };
        statementFor(gateway.prisma, 'pet', args, options);
        // The same read with other ids, lists and searched texts: the kept text, with the new values where the new read puts them.
        const other = otherValues(args) as FindManyArgs;
        const before = templates.size;
        const kept = statementFor(gateway.prisma, 'pet', other, options)!;
        const built = findManyStatement(models, 'pet', other, options);
        expect({ sql: kept.sql, params: kept.params }).toEqual({ sql: built.sql, params: built.params });
        if (templates.size === before) reused++;
      }),
      { numRuns: 200 },
    );
    expect(reused).toBeGreaterThan(100);
  });

  it('leave to Prisma what they do not cover, rather than read it differently', async () => {
    const select = { id: true };
    const outside: Array<[string, FindManyArgs]> = [
      ['a related page with a cursor', { select: { id: true, orders: { select: { id: true }, orderBy: { id: 'asc' }, cursor: { id: 1n }, take: 2, skip: 1 } }, orderBy: { id: 'asc' }, take: 2 }],
      ['a filter of another kind', { select, where: { id: { notIn: [1n, 2n] } }, orderBy: { id: 'asc' }, take: 2 }],
      ['one of values of an enum', { select, where: { status: { in: ['sold'] } }, orderBy: { id: 'asc' }, take: 2 }],
      ['a time compared as a value', { select, where: { createdAt: new Date() }, orderBy: { id: 'asc' }, take: 2 }],
      ['OR', { select, where: { OR: [{ status: 'sold' }] }, orderBy: { id: 'asc' }, take: 2 }],
      ['a filter through a relation', { select, where: { category: { name: 'x' } }, orderBy: { id: 'asc' }, take: 2 }],
      ['an order by a relation', { select, orderBy: { category: { name: 'asc' } }, take: 2 }],
      ['a cursor on a column the order does not end with', { select, orderBy: [{ id: 'asc' }, { name: 'asc' }], cursor: { id: 1n }, take: 2 }],
      ['distinct', { select, orderBy: { id: 'asc' }, distinct: ['name'] } as FindManyArgs],
    ];
    for (const [why, args] of outside) {
      expect(statementFor(gateway.prisma, 'pet', args), why).toBeUndefined();
      let throughPrisma = false;
      await findMany(gateway.prisma, 'pet', args, async () => {
        throughPrisma = true;
        return [];
      });
      expect(throughPrisma, why).toBe(true);
    }
  });
});
