-- Written by hand: completeOrder and cancelOrder in one round trip, as place_order places an order
-- (docs/performance.md, "completeOrder and cancelOrder in one round trip").
--
-- Completing and cancelling both close an open order, so one function does either: the domain
-- (src/domain/stock.ts completeOrder, cancelOrder) calls it as one statement, which runs in that
-- statement's transaction, and the gateway sends one statement instead of nine (BEGIN, find the order's
-- pet, lock the pet, lock the order, read it, lock the stock, complete or delete the order, look for an
-- open order at zero, settle the entry, COMMIT). What stays in TypeScript: the status rule
-- (src/domain/stock-status.ts decides the three statuses passed in), the errors and their messages, and
-- the events, published once the statement has committed.
--
-- Locks are taken in the project's one order (src/domain/locks.ts: category, pet, order, inventory entry).
-- The order's pet is known only once the order is read, so the order is read again under the pet's lock:
-- it may have been completed or cancelled meanwhile.
--
-- A refusal is a row, not an exception:
--   outcome 'no order'   the order does not exist (NOT_FOUND); nothing is written
--           'complete'   the order is already complete (CONFLICT); nothing is written
--           'completed'  the order is complete now; its ship date is now unless it had one
--           'cancelled'  the order is deleted and its quantity is back in stock
-- With 'completed' or 'cancelled' the row carries the order as the answer needs it (as it was, for a
-- cancelled one) and what the events need. `stock` is null when the pet has no inventory entry: then
-- nothing is settled.
CREATE FUNCTION close_order(
  order_id bigint,
  cancel boolean,
  -- stockStatus(n > 0, …), stockStatus(0, true) and stockStatus(0, false): with stock, at zero with an open
  -- order, at zero without.
  status_with_stock "PetStatus",
  status_at_zero_open "PetStatus",
  status_at_zero_closed "PetStatus",
  OUT outcome text,
  OUT pet_id bigint,
  OUT quantity integer,
  OUT ship_date timestamptz,
  OUT created_at timestamptz,
  OUT stock integer,
  OUT entry_status text,
  OUT previous_status text,
  OUT pet_name text,
  OUT pet_category_id bigint
)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  pet_status "PetStatus";
  new_status "PetStatus";
  was_complete boolean;
BEGIN
  SELECT o.pet_id INTO pet_id FROM orders AS o WHERE o.id = close_order.order_id;
  IF NOT FOUND THEN
    outcome := 'no order';
    RETURN;
  END IF;
  SELECT p.name, p.category_id, p.status INTO pet_name, pet_category_id, pet_status
    FROM pets AS p WHERE p.id = close_order.pet_id FOR NO KEY UPDATE;
  -- A pet goes only with its orders (deletePet locks it first), so a locked order has its pet.
  IF NOT FOUND THEN
    outcome := 'no order';
    RETURN;
  END IF;
  SELECT o.quantity, o.ship_date, o.created_at, o.complete INTO quantity, ship_date, created_at, was_complete
    FROM orders AS o WHERE o.id = close_order.order_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'no order';
    RETURN;
  END IF;
  IF was_complete THEN
    outcome := 'complete';
    RETURN;
  END IF;
  previous_status := pet_status::text;

  SELECT i.quantity INTO stock FROM inventory_items AS i WHERE i.pet_id = close_order.pet_id FOR UPDATE;
  IF close_order.cancel THEN
    DELETE FROM orders AS o WHERE o.id = close_order.order_id;
    outcome := 'cancelled';
    stock := stock + close_order.quantity;
  ELSE
    UPDATE orders AS o SET complete = true, ship_date = coalesce(o.ship_date, now())
      WHERE o.id = close_order.order_id RETURNING o.ship_date INTO ship_date;
    outcome := 'completed';
  END IF;
  IF stock IS NULL THEN
    RETURN;
  END IF;

  -- Whether an order is still open matters only at zero.
  IF stock > 0 THEN
    new_status := status_with_stock;
  ELSIF EXISTS (SELECT 1 FROM orders AS o WHERE o.pet_id = close_order.pet_id AND NOT o.complete) THEN
    new_status := status_at_zero_open;
  ELSE
    new_status := status_at_zero_closed;
  END IF;
  -- updated_at as Prisma's @updatedAt would set it.
  UPDATE inventory_items AS i SET quantity = stock, status = new_status, updated_at = now()
    WHERE i.pet_id = close_order.pet_id;
  entry_status := new_status::text;
  -- The pet carries its entry's status; it is written only when that changes.
  IF new_status <> pet_status THEN
    UPDATE pets AS p SET status = new_status, updated_at = now() WHERE p.id = close_order.pet_id;
  END IF;
END
$fn$;
