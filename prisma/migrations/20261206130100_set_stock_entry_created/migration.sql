-- Written by hand: set_stock also tells whether the pet's entry is new (docs/operations.md, "Response
-- cache"). A count that leaves an entry's status where it was moves it in no list of entries (they are by
-- status, then pet), so the response cache keeps those lists; a new entry joins them, so it must not.
--
-- entry_created: the upsert inserted the entry (a row an INSERT ... ON CONFLICT inserted has no xmax; one it
-- updated has the updating transaction's). Everything else is as before (*_set_stock_function).
DROP FUNCTION set_stock(bigint, integer, "PetStatus", "PetStatus", "PetStatus");

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
  OUT pet_category_id bigint,
  OUT entry_created boolean
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
    RETURNING i.status::text, i.updated_at, i.xmax = 0 INTO entry_status, entry_updated_at, entry_created;
  -- The pet carries its entry's status; it is written only when that changes.
  IF new_status <> pet_status THEN
    UPDATE pets AS p SET status = new_status, updated_at = now() WHERE p.id = set_stock.pet_id;
  END IF;
  outcome := 'set';
END
$fn$;
