import pg from 'pg';
import { undoLater } from './cleanup.js';
import { dataSet } from './data.js';

/**
 * Rows the writes that consume one a request take, made ready for them: open orders for the rows that
 * close one (completeOrder, cancelOrder), pets and categories nothing refers to for the rows that delete
 * one (deletePet, deleteCategory), so every measured request is a write that succeeds. A pool per
 * variant, in an id range of its own far above the data set's and placeOrder's, where no read looks:
 * the orders on the pets kept for placeOrder (never read), the pets in a category of the pool's own, the
 * categories after every read's first page. It is filled before a cell is measured (`supply`), never
 * during one: the database's time for the filling must not count as the cell's.
 */

/** More requests per second than one gateway or PostGraphile answers on a bench machine: a drive never runs dry. */
const MOST_REQUESTS_PER_SECOND = 6_000;
const ID_RANGE = 100_000_000n;

let database: pg.Pool | undefined;
let ranges = 0;

/** The bench's database, where the pools' rows go; before any is supplied. */
export function rowPoolsIn(url: string): void {
  const pool = new pg.Pool({ connectionString: url, max: 1, allowExitOnIdle: true });
  // Its idle connection ends when the run drops the database; that is no error of the run.
  pool.on('error', () => undefined);
  database = pool;
  undoLater('close the row pools\' connection', async () => {
    database = undefined;
    await pool.end();
  });
}

export interface RowPool {
  /** The next row's id. Past the end of what was supplied, an id with no row (answered NOT_FOUND, counted as an error). */
  take(): string;
  /** At least `requests` rows ahead, or enough for `durationS` seconds of load. */
  supply(need: { requests?: number; durationS?: number }): Promise<void>;
}

/** What makes a pool's rows: its table, and the INSERT of ids $1 to $2 ($3 on: `values`). */
interface PoolRows {
  table: 'orders' | 'pets' | 'categories';
  insert: string;
  values?: (base: bigint) => unknown[];
  /** Run once, before the first filling (a category for the pool's pets). */
  prepare?: (db: pg.Pool, base: bigint) => Promise<unknown>;
}

function rowPool(rows: PoolRows): RowPool {
  const base = ID_RANGE * BigInt(++ranges) * 10n;
  let next = base;
  let end = base;
  let prepared = false;
  return {
    take: () => String(next++),
    async supply({ requests = 0, durationS = 0 }) {
      const wanted = BigInt(Math.max(requests, Math.ceil(durationS * MOST_REQUESTS_PER_SECOND)));
      if (end - next >= wanted) return;
      if (!database) throw new Error('row pools: rowPoolsIn(url) was not called');
      if (!prepared) await rows.prepare?.(database, base);
      prepared = true;
      // What the last drive left goes first, so unused pool rows do not pile up.
      await database.query(`DELETE FROM ${rows.table} WHERE id >= $1 AND id < $2`, [String(next), String(end)]);
      const first = end > next ? end : next;
      const count = wanted + 1_000n;
      await database.query(rows.insert, [String(first), String(first + count - 1n), ...(rows.values?.(base) ?? [])]);
      next = first;
      end = first + count;
    },
  };
}

/** Open orders of one unit, each on one of the pets kept for placeOrder. */
export function openOrders(): RowPool {
  return rowPool({
    table: 'orders',
    insert: `INSERT INTO orders (id, pet_id, quantity, complete, created_at)
      SELECT g, $3::bigint + 1 + (g % $4::bigint), 1, false, now() FROM generate_series($1::bigint, $2::bigint) AS g`,
    values: () => [dataSet.readPets, dataSet.pets - dataSet.readPets],
  });
}

/** Pets with no orders and no inventory entry (PostGraphile's generated delete refuses a pet with orders), in a category of the pool's own. */
export function deletablePets(): RowPool {
  return rowPool({
    table: 'pets',
    prepare: (db, base) =>
      db.query(
        `INSERT INTO categories (id, name, created_at, updated_at) VALUES ($1::bigint, 'zz bench deletable pets ' || $1, now(), now())
         ON CONFLICT (id) DO NOTHING`,
        [String(base)],
      ),
    insert: `INSERT INTO pets (id, name, category_id, status, created_at, updated_at)
      SELECT g, 'zz bench deletable ' || g, $3::bigint, 'available', now(), now() FROM generate_series($1::bigint, $2::bigint) AS g`,
    values: (base) => [String(base)],
  });
}

/** Categories with no pets. */
export function deletableCategories(): RowPool {
  return rowPool({
    table: 'categories',
    insert: `INSERT INTO categories (id, name, created_at, updated_at)
      SELECT g, 'zz bench deletable ' || g, now(), now() FROM generate_series($1::bigint, $2::bigint) AS g`,
  });
}

/** How many categories a rename picks from. */
const RENAMED_CATEGORIES = 1_000n;

/**
 * Categories for renames, made once (a rename consumes nothing): `take` gives one of them at random.
 * No read of the bench asks for them.
 */
export function renamableCategories(): RowPool {
  const base = ID_RANGE * BigInt(++ranges) * 10n;
  let made = false;
  return {
    take: () => String(base + BigInt(Math.floor(Math.random() * Number(RENAMED_CATEGORIES)))),
    async supply() {
      if (made) return;
      if (!database) throw new Error('row pools: rowPoolsIn(url) was not called');
      await database.query(
        `INSERT INTO categories (id, name, created_at, updated_at)
         SELECT g, 'zz bench renamable ' || g, now(), now() FROM generate_series($1::bigint, $2::bigint) AS g
         ON CONFLICT (id) DO NOTHING`,
        [String(base), String(base + RENAMED_CATEGORIES - 1n)],
      );
      made = true;
    },
  };
}
