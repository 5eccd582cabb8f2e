-- Written by hand: placeOrder in one round trip (docs/performance.md, "placeOrder in one round trip").
--
-- The domain (src/domain/stock.ts placeOrder) calls this function as one statement: it runs in that
-- statement's transaction, so it takes the stock and records the order together or not at all, and
-- the gateway sends one statement instead of six (BEGIN, lock the pet, lock its stock, insert the
-- order, settle the stock, COMMIT). What stays in TypeScript: validating the input, the status rule
-- (src/domain/stock-status.ts decides the two statuses passed in, so the rule is not written twice),
-- the errors and their messages, and the events, published once the statement has committed.
--
-- Locks are taken in the project's one order (src/domain/locks.ts: category, pet, order, inventory
-- entry): the pet FOR NO KEY UPDATE first, which serialises every write to the pet's stock and
-- orders, then its inventory entry FOR UPDATE. Concurrent orders for one pet therefore queue on the
-- pet's row and each sees the stock the one before it left: no oversell.
--
-- A refusal is a row, not an exception, so the domain can name it without parsing SQLSTATEs:
--   outcome 'no pet'       the pet does not exist (NOT_FOUND)
--           'no stock'     the pet has no inventory entry (INSUFFICIENT_STOCK)
--           'insufficient' stock < quantity; `stock` says how much there is (INSUFFICIENT_STOCK)
--           'placed'       the order is written; the row carries what the answer and the events need
-- Nothing is written unless the outcome is 'placed'.
CREATE FUNCTION place_order(
  pet_id bigint,
  quantity integer,
  ship_date timestamptz,
  -- The entry's status when stock is left after this order, and when this order took the last of it
  -- (the order just placed is open): stockStatus(n > 0, true) and stockStatus(0, true).
  status_with_stock_left "PetStatus",
  status_at_zero "PetStatus",
  OUT outcome text,
  OUT stock integer,
  OUT order_id bigint,
  OUT order_created_at timestamptz,
  OUT pet_name text,
  OUT pet_category_id bigint,
  OUT previous_status text,
  OUT entry_status text
)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  pet_status "PetStatus";
  new_status "PetStatus";
BEGIN
  SELECT p.name, p.category_id, p.status INTO pet_name, pet_category_id, pet_status
    FROM pets AS p WHERE p.id = place_order.pet_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    outcome := 'no pet';
    RETURN;
  END IF;
  previous_status := pet_status::text;

  SELECT i.quantity INTO stock FROM inventory_items AS i WHERE i.pet_id = place_order.pet_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'no stock';
    RETURN;
  END IF;
  IF stock < place_order.quantity THEN
    outcome := 'insufficient';
    RETURN;
  END IF;

  INSERT INTO orders (pet_id, quantity, ship_date)
    VALUES (place_order.pet_id, place_order.quantity, place_order.ship_date)
    RETURNING id, created_at INTO order_id, order_created_at;

  new_status := CASE WHEN stock - place_order.quantity > 0 THEN status_with_stock_left ELSE status_at_zero END;
  -- updated_at as Prisma's @updatedAt would set it on these writes.
  UPDATE inventory_items AS i SET quantity = stock - place_order.quantity, status = new_status, updated_at = now()
    WHERE i.pet_id = place_order.pet_id;
  -- The pet carries its entry's status; it is written only when that changes.
  IF new_status <> pet_status THEN
    UPDATE pets AS p SET status = new_status, updated_at = now() WHERE p.id = place_order.pet_id;
  END IF;
  entry_status := new_status::text;
  outcome := 'placed';
END
$fn$;
