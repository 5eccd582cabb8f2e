-- Written by hand: update_pet counts where a rename lands (name_rank, name_rank_in_status) only when
-- asked to. The counts narrow what a rename outdates for whatever keeps answers (the response cache, live
-- queries); a gateway with none of them asks for none, and a rename costs the database what it did
-- before the counts. Left out, they are null, as for a write that renamed nothing: a rename told
-- without them outdates every first page by name of its category (docs/operations.md, "Response
-- cache"). with_name_rank defaults to true, so the calls of instances of the version before, with four
-- arguments, count as they did.
--
-- Everything else is as before (*_update_pet_name_rank): the same locks, outcomes and row.
DROP FUNCTION update_pet(bigint, text, bigint, "PetStatus");

CREATE FUNCTION update_pet(
  pet_id bigint,
  new_name text,
  new_category_id bigint,
  new_status "PetStatus",
  with_name_rank boolean DEFAULT true,
  OUT outcome text,
  OUT pet_name text,
  OUT pet_category_id bigint,
  OUT pet_status text,
  OUT previous_status text,
  OUT pet_created_at timestamptz,
  OUT pet_updated_at timestamptz,
  OUT name_rank integer,
  OUT name_rank_in_status integer
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
  IF new_name IS NOT NULL AND with_name_rank THEN
    SELECT count(*)::integer, (count(*) FILTER (WHERE nearest.status::text = pet_status))::integer
      INTO name_rank, name_rank_in_status
      FROM (
        SELECT p.status FROM pets AS p
          WHERE p.category_id = pet_category_id AND (p.name, p.id) < (pet_name, update_pet.pet_id)
          ORDER BY p.name, p.id
          LIMIT 100
      ) AS nearest;
  END IF;
  outcome := 'updated';
END
$fn$;
