import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { undoLater } from './cleanup.js';
import { log } from './config.js';

/**
 * The data set: 50 categories, 10,000 pets each with inventory, 50,000 orders; BENCH_SCALE times the
 * pets and orders (10: 100,000 pets and 500,000 orders in the same 50 categories).
 */
export const dataScale = benchScale();
export const dataSet = {
  categories: 50,
  pets: 10_000 * dataScale,
  /** Pets 1..readPets are read and carry the orders; the rest are kept for placeOrder. */
  readPets: 9_000 * dataScale,
  orders: 50_000 * dataScale,
  /** Stock of each placeOrder pet: never runs out during a run. */
  orderPetStock: 1_000_000,
} as const;

function benchScale(): number {
  const value = Number(process.env.BENCH_SCALE ?? 1);
  if (!Number.isInteger(value) || value < 1 || value > 100) throw new Error(`BENCH_SCALE must be a whole number from 1 to 100, not "${process.env.BENCH_SCALE}"`);
  return value;
}

export const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string, base = adminUrl): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export const benchDatabasePrefix = 'petstore_bench_';

/**
 * A database of the run's own, dropped when the run ends or is interrupted. The drop is registered
 * before the CREATE is sent: a signal while it runs waits for it, then drops what it made.
 */
export async function createDatabase(): Promise<string> {
  const name = `${benchDatabasePrefix}${process.pid}_${randomBytes(3).toString('hex')}`;
  let creating: Promise<unknown> = Promise.resolve();
  undoLater(`drop database ${name}`, async () => {
    await creating.catch(() => undefined);
    await dropDatabase(name);
    log(`dropped database ${name}`);
  });
  creating = withClient(adminUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  await creating;
  log(`created database ${name}`);
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withClient(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Bench databases left by runs that were killed before they could clean up. */
export async function leftoverDatabases(except: string): Promise<string[]> {
  return withClient(adminUrl, async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2 ORDER BY 1`,
      [`${benchDatabasePrefix}%`, except],
    );
    return rows.map((row) => row.datname);
  });
}

/**
 * Loads the data set with set-based INSERTs (generate_series), in one
 * transaction, then VACUUM ANALYZE so both servers meet planned, visible data.
 */
export async function loadData(url: string): Promise<void> {
  const { categories, pets, readPets, orders, orderPetStock } = dataSet;
  await withClient(url, async (db) => {
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO categories (id, name, description, created_at, updated_at)
       SELECT g, 'Category ' || g, 'Benchmark category number ' || g, now(), now()
       FROM generate_series(1, $1::int) AS g`,
      [categories],
    );
    await db.query(
      `INSERT INTO pets (id, name, category_id, status, created_at, updated_at)
       SELECT g, 'Pet ' || g, ((g - 1) % $2::int) + 1, 'available', now(), now()
       FROM generate_series(1, $1::int) AS g`,
      [pets, categories],
    );
    await db.query(
      `INSERT INTO inventory_items (pet_id, quantity, status, updated_at)
       SELECT g, CASE WHEN g > $2::int THEN $3::int ELSE 1 + g % 25 END, 'available', now()
       FROM generate_series(1, $1::int) AS g`,
      [pets, readPets, orderPetStock],
    );
    // A quarter of the orders complete (with a ship date), the rest open; all on the read pets.
    await db.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at)
       SELECT g, ((g - 1) % $2::int) + 1, 1 + g % 3,
              CASE WHEN g % 4 = 0 THEN timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' END,
              g % 4 = 0, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute'
       FROM generate_series(1, $1::int) AS g`,
      [orders, readPets],
    );
    for (const [table, last] of [
      ['categories', categories],
      ['pets', pets],
      ['orders', orders],
    ] as const) {
      await db.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), $1::bigint)`, [last]);
    }
    await db.query('COMMIT');
    await db.query('VACUUM ANALYZE');
  });
}

/**
 * PostGraphile has no placeOrder; the way it serves a custom write is a
 * VOLATILE function, which it exposes as a mutation (benchPlaceOrder). This
 * one follows the gateway's rules in src/domain/stock.ts and locks.ts: lock the
 * pet's row, then its stock row, refuse when short, insert the order, then set
 * the entry's and the pet's status from the stock left and the open orders.
 */
export const placeOrderFunction = /* SQL */ `
CREATE FUNCTION bench_place_order(pet_id bigint, quantity integer) RETURNS orders
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  stock integer;
  remaining integer;
  placed orders;
  next_status "PetStatus";
BEGIN
  PERFORM 1 FROM pets AS p WHERE p.id = bench_place_order.pet_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Pet % does not exist.', bench_place_order.pet_id;
  END IF;
  SELECT i.quantity INTO stock FROM inventory_items AS i WHERE i.pet_id = bench_place_order.pet_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Pet % has no stock to order.', bench_place_order.pet_id;
  END IF;
  IF stock < bench_place_order.quantity THEN
    RAISE EXCEPTION 'Pet % has % in stock; % were ordered.', bench_place_order.pet_id, stock, bench_place_order.quantity;
  END IF;
  INSERT INTO orders (pet_id, quantity, ship_date) VALUES (bench_place_order.pet_id, bench_place_order.quantity, NULL)
    RETURNING * INTO placed;
  remaining := stock - bench_place_order.quantity;
  next_status := CASE
    WHEN remaining > 0 THEN 'available'
    WHEN EXISTS (SELECT 1 FROM orders AS o WHERE o.pet_id = bench_place_order.pet_id AND NOT o.complete) THEN 'pending'
    ELSE 'sold'
  END;
  UPDATE inventory_items AS i SET quantity = remaining, status = next_status, updated_at = now()
    WHERE i.pet_id = bench_place_order.pet_id;
  UPDATE pets AS p SET status = next_status, updated_at = now() WHERE p.id = bench_place_order.pet_id;
  RETURN placed;
END
$fn$;
`;

/**
 * Nor has it completeOrder or cancelOrder: these two functions close an order as the gateway does
 * (src/domain/stock.ts, locks.ts): lock the order's pet, then the order (read again under the lock),
 * refuse one already complete, then lock the stock, complete the order (ship date now unless it had one)
 * or delete it and return its quantity, and set the entry's and the pet's status.
 */
export const closeOrderFunctions = ['complete', 'cancel'].map(
  (closing) => /* SQL */ `
CREATE FUNCTION bench_${closing}_order(order_id bigint) RETURNS orders
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  the_pet bigint;
  closed orders;
  stock integer;
  next_status "PetStatus";
BEGIN
  SELECT o.pet_id INTO the_pet FROM orders AS o WHERE o.id = bench_${closing}_order.order_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Order % does not exist.', bench_${closing}_order.order_id;
  END IF;
  PERFORM 1 FROM pets AS p WHERE p.id = the_pet FOR NO KEY UPDATE;
  SELECT * INTO closed FROM orders AS o WHERE o.id = bench_${closing}_order.order_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Order % does not exist.', bench_${closing}_order.order_id;
  END IF;
  IF closed.complete THEN
    RAISE EXCEPTION 'Order % is already complete.', bench_${closing}_order.order_id;
  END IF;
  SELECT i.quantity INTO stock FROM inventory_items AS i WHERE i.pet_id = the_pet FOR UPDATE;
  ${
    closing === 'complete'
      ? `UPDATE orders AS o SET complete = true, ship_date = coalesce(o.ship_date, now())
    WHERE o.id = bench_complete_order.order_id RETURNING * INTO closed;`
      : `DELETE FROM orders AS o WHERE o.id = bench_cancel_order.order_id;
  stock := stock + closed.quantity;`
  }
  IF stock IS NOT NULL THEN
    next_status := CASE
      WHEN stock > 0 THEN 'available'
      WHEN EXISTS (SELECT 1 FROM orders AS o WHERE o.pet_id = the_pet AND NOT o.complete) THEN 'pending'
      ELSE 'sold'
    END;
    UPDATE inventory_items AS i SET quantity = stock, status = next_status, updated_at = now() WHERE i.pet_id = the_pet;
    UPDATE pets AS p SET status = next_status, updated_at = now() WHERE p.id = the_pet AND p.status <> next_status;
  END IF;
  RETURN closed;
END
$fn$;
`,
);

