-- Written by hand: deleteCategory and deletePet in one round trip each, as update_pet updates a pet
-- (docs/performance.md, "The catalogue's writes in one statement").
--
-- The domain (src/domain/catalog.ts deleteCategory, deletePet) calls these functions as one statement
-- when the answer selects no relation of the row: each runs in that statement's transaction, and the
-- gateway sends one statement instead of six (BEGIN, lock the row, count what holds it, read it, delete,
-- COMMIT; deletePet one more, its finished orders). What stays in TypeScript: the errors and their
-- messages, and, when the answer selects a relation, reading it under the same lock in a transaction
-- before the function deletes the row (a row deleted has nothing left to read relations from).
--
-- Locks are taken in the project's one order (src/domain/locks.ts: category, pet, order, inventory
-- entry), each on the row that goes, FOR UPDATE, before anything is counted:
--   delete_category locks the category. Adding a pet to it (an INSERT, whose foreign key check takes
--     KEY SHARE on the category) or moving one into it (update_pet, KEY SHARE) either committed before
--     the lock was granted, and is counted, or waits for it and then finds the category gone.
--   delete_pet locks the pet, then deletes its finished orders, then the pet; its inventory entry goes
--     with it (ON DELETE CASCADE). place_order locks the pet first too (FOR NO KEY UPDATE), so an order
--     placed meanwhile either committed before the lock and is counted as open, or waits for it and
--     then finds no pet: no order is ever placed for a pet being deleted.
-- Each statement of a VOLATILE function sees what committed before it began (READ COMMITTED), so the
-- count after the lock sees every write the lock waited for.
--
-- A refusal is a row, not an exception, so the domain can name it without parsing SQLSTATEs:
--   delete_category outcome 'no category'      the category does not exist (NOT_FOUND)
--                           'has pets'         pet_count pets belong to it (CONFLICT)
--                           'deleted'          it is gone; the row carries it as it was
--   delete_pet      outcome 'no pet'           the pet does not exist (NOT_FOUND)
--                           'has open orders'  open_orders orders for it are open (CONFLICT)
--                           'deleted'          it is gone, with its finished orders and inventory entry;
--                                              the row carries it as it was
-- Nothing is written unless the outcome is 'deleted'.
CREATE FUNCTION delete_category(
  category_id bigint,
  OUT outcome text,
  OUT pet_count integer,
  OUT category_name text,
  OUT category_description text,
  OUT category_created_at timestamptz,
  OUT category_updated_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  SELECT c.name, c.description, c.created_at, c.updated_at
    INTO category_name, category_description, category_created_at, category_updated_at
    FROM categories AS c WHERE c.id = delete_category.category_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'no category';
    RETURN;
  END IF;
  SELECT count(*) INTO pet_count FROM pets AS p WHERE p.category_id = delete_category.category_id;
  IF pet_count > 0 THEN
    outcome := 'has pets';
    RETURN;
  END IF;
  DELETE FROM categories AS c WHERE c.id = delete_category.category_id;
  outcome := 'deleted';
END
$fn$;

CREATE FUNCTION delete_pet(
  pet_id bigint,
  OUT outcome text,
  OUT open_orders integer,
  OUT pet_name text,
  OUT pet_category_id bigint,
  OUT pet_status text,
  OUT pet_created_at timestamptz,
  OUT pet_updated_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  SELECT p.name, p.category_id, p.status::text, p.created_at, p.updated_at
    INTO pet_name, pet_category_id, pet_status, pet_created_at, pet_updated_at
    FROM pets AS p WHERE p.id = delete_pet.pet_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'no pet';
    RETURN;
  END IF;
  SELECT count(*) INTO open_orders FROM orders AS o WHERE o.pet_id = delete_pet.pet_id AND NOT o.complete;
  IF open_orders > 0 THEN
    outcome := 'has open orders';
    RETURN;
  END IF;
  DELETE FROM orders AS o WHERE o.pet_id = delete_pet.pet_id;
  -- Its inventory entry goes with it (ON DELETE CASCADE).
  DELETE FROM pets AS p WHERE p.id = delete_pet.pet_id;
  outcome := 'deleted';
END
$fn$;
