import pg from 'pg';
import { undoLater } from './cleanup.js';
import { dataSet } from './data.js';

/**
 * Open orders for the rows that close one (completeOrder, cancelOrder): each request closes an order
 * that is still open, so every measured request is a write that succeeds. A pool per variant, in an id
 * range of its own far above the data set's and placeOrder's, on the pets kept for placeOrder (never
 * read, so the reads meet the same data). It is filled before a cell is measured (`supply`), never
 * during one: the database's time for the filling must not count as the cell's.
 */

/** More requests per second than one gateway or PostGraphile answers on a bench machine: a drive never runs dry. */
const MOST_REQUESTS_PER_SECOND = 6_000;
const ID_RANGE = 100_000_000n;

let database: pg.Pool | undefined;
let ranges = 0;

/** The bench's database, where the pools' orders go; before any is supplied. */
export function openOrdersIn(url: string): void {
  const pool = new pg.Pool({ connectionString: url, max: 1, allowExitOnIdle: true });
  // Its idle connection ends when the run drops the database; that is no error of the run.
  pool.on('error', () => undefined);
  database = pool;
  undoLater('close the open orders\' connection', async () => {
    database = undefined;
    await pool.end();
  });
}

export interface OpenOrders {
  /** The next open order's id. Past the end of what was supplied, an id with no order (answered NOT_FOUND, counted as an error). */
  take(): string;
  /** At least `requests` open orders ahead, or enough for `durationS` seconds of load. */
  supply(need: { requests?: number; durationS?: number }): Promise<void>;
}

export function openOrders(): OpenOrders {
  const base = ID_RANGE * BigInt(++ranges) * 10n;
  let next = base;
  let end = base;
  return {
    take: () => String(next++),
    async supply({ requests = 0, durationS = 0 }) {
      const wanted = BigInt(Math.max(requests, Math.ceil(durationS * MOST_REQUESTS_PER_SECOND)));
      if (end - next >= wanted) return;
      if (!database) throw new Error('open orders: openOrdersIn(url) was not called');
      // What the last drive left open goes first, so unclosed pool orders do not pile up.
      await database.query('DELETE FROM orders WHERE id >= $1 AND id < $2', [String(next), String(end)]);
      const first = end > next ? end : next;
      const count = wanted + 1_000n;
      await database.query(
        `INSERT INTO orders (id, pet_id, quantity, complete, created_at)
         SELECT g, $3::bigint + 1 + (g % $4::bigint), 1, false, now() FROM generate_series($1::bigint, $2::bigint) AS g`,
        [String(first), String(first + count - 1n), dataSet.readPets, dataSet.pets - dataSet.readPets],
      );
      next = first;
      end = first + count;
    },
  };
}
