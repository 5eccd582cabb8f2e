-- Written by hand: updateInventory in one round trip, as place_order places an order (docs/performance.md,
-- "updateInventory in one round trip").
--
-- The domain (src/domain/stock.ts updateInventory) calls this function as one statement: it runs in that
-- statement's transaction, and the gateway sends one statement instead of seven (BEGIN, lock the pet, create
-- or update its entry, look for an open order at zero, settle the entry's status, the pet's, COMMIT). What
-- stays in TypeScript: validating the input, the status rule (src/domain/stock-status.ts decides the three
-- statuses passed in, so the rule is not written twice), the error and its message, and the events, published
-- once the statement has committed.
--
-- Locks are taken in the project's one order (src/domain/locks.ts: category, pet, order, inventory entry): the
-- pet FOR NO KEY UPDATE first, which serialises every write to the pet's stock and orders (place_order takes
-- the same lock), then its entry, written by the upsert.
--
-- A refusal is a row, not an exception:
--   outcome 'no pet'  the pet does not exist (NOT_FOUND); nothing is written
--           'set'     the entry holds the new count and status; the row carries what the answer and the
--                     events need
CREATE FUNCTION set_stock(
  pet_id bigint,
  quantity integer,
  -- stockStatus(n > 0, …), stockStatus(0, true) and stockStatus(0, false): with stock, at zero with an open
  -- order, at zero without.
  status_with_stock "PetStatus",
  status_at_zero_open "PetStatus",
  status_at_zero_closed "PetStatus",
  OUT outcome text,
  OUT entry_status text,
  OUT entry_updated_at timestamptz,
  OUT previous_status text,
  OUT pet_name text,
  OUT pet_category_id bigint
)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  pet_status "PetStatus";
  new_status "PetStatus";
BEGIN
  SELECT p.name, p.category_id, p.status INTO pet_name, pet_category_id, pet_status
    FROM pets AS p WHERE p.id = set_stock.pet_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    outcome := 'no pet';
    RETURN;
  END IF;
  previous_status := pet_status::text;

  -- Whether an order is open matters only at zero.
  IF set_stock.quantity > 0 THEN
    new_status := status_with_stock;
  ELSIF EXISTS (SELECT 1 FROM orders AS o WHERE o.pet_id = set_stock.pet_id AND NOT o.complete) THEN
    new_status := status_at_zero_open;
  ELSE
    new_status := status_at_zero_closed;
  END IF;

  -- updated_at as Prisma's @updatedAt would set it.
  INSERT INTO inventory_items AS i (pet_id, quantity, status, updated_at)
    VALUES (set_stock.pet_id, set_stock.quantity, new_status, now())
    ON CONFLICT ON CONSTRAINT inventory_items_pkey DO UPDATE SET quantity = EXCLUDED.quantity, status = EXCLUDED.status, updated_at = EXCLUDED.updated_at
    RETURNING i.status::text, i.updated_at INTO entry_status, entry_updated_at;
  -- The pet carries its entry's status; it is written only when that changes.
  IF new_status <> pet_status THEN
    UPDATE pets AS p SET status = new_status, updated_at = now() WHERE p.id = set_stock.pet_id;
  END IF;
  outcome := 'set';
END
$fn$;
