-- Written by hand: updatePet in one round trip, as place_order places an order (docs/performance.md,
-- "updatePet in one round trip").
--
-- The domain (src/domain/catalog.ts updatePet) calls this function as one statement: it runs in that
-- statement's transaction, and the gateway sends one statement instead of six (BEGIN, lock the new
-- category, lock the pet, read it with its stock entry, update it, COMMIT). What stays in TypeScript:
-- validating the input, the errors and their messages, and the event of a status change, published
-- once the statement has committed.
--
-- Locks are taken in the project's one order (src/domain/locks.ts: category, pet, order, inventory
-- entry): the new category FOR KEY SHARE (it cannot be deleted while the pet moves into it), then the
-- pet FOR NO KEY UPDATE, which serialises this write with the stock writes that set its status.
--
-- A refusal is a row, not an exception, so the domain can name it without parsing SQLSTATEs:
--   outcome 'no pet'               the pet does not exist (NOT_FOUND)
--           'no category'          the new category does not exist (NOT_FOUND)
--           'status follows stock' a status other than its stock entry's (CONFLICT)
--           'updated'              the pet is written; the row carries it, and its status before
-- Nothing is written unless the outcome is 'updated'. A null argument leaves its column as it is.
CREATE FUNCTION update_pet(
  pet_id bigint,
  new_name text,
  new_category_id bigint,
  new_status "PetStatus",
  OUT outcome text,
  OUT pet_name text,
  OUT pet_category_id bigint,
  OUT pet_status text,
  OUT previous_status text,
  OUT pet_created_at timestamptz,
  OUT pet_updated_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  category_found boolean := true;
  entry_status "PetStatus";
BEGIN
  IF new_category_id IS NOT NULL THEN
    PERFORM 1 FROM categories AS c WHERE c.id = new_category_id FOR KEY SHARE;
    category_found := FOUND;
  END IF;
  SELECT p.status::text INTO previous_status FROM pets AS p WHERE p.id = update_pet.pet_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    outcome := 'no pet';
    RETURN;
  END IF;
  IF NOT category_found THEN
    outcome := 'no category';
    RETURN;
  END IF;
  IF new_status IS NOT NULL THEN
    SELECT i.status INTO entry_status FROM inventory_items AS i WHERE i.pet_id = update_pet.pet_id;
    IF FOUND AND entry_status <> new_status THEN
      outcome := 'status follows stock';
      RETURN;
    END IF;
  END IF;
  -- updated_at as Prisma's @updatedAt would set it.
  UPDATE pets AS p
    SET name = COALESCE(new_name, p.name),
        category_id = COALESCE(new_category_id, p.category_id),
        status = COALESCE(new_status, p.status),
        updated_at = now()
    WHERE p.id = update_pet.pet_id
    RETURNING p.name, p.category_id, p.status::text, p.created_at, p.updated_at
    INTO pet_name, pet_category_id, pet_status, pet_created_at, pet_updated_at;
  outcome := 'updated';
END
$fn$;
