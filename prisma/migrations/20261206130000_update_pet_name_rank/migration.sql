-- Written by hand: update_pet also tells, for a rename, where the new name lands among the pets of its
-- category by name (docs/operations.md, "Response cache").
--
-- name_rank: how many pets of the pet's category come before it in the order of name, then id (the
-- order of a page of pets by name); name_rank_in_status: how many of those have its status. Both are
-- counted among the category's first 100 by name (the most a page holds), so a count of 100 means "100 or
-- more"; the one in its status is exact while the other is under 100, and otherwise a lower bound.
-- A rename that lands at rank 20 or more cannot change the first page of 20 by name: such a page
-- changes only when one of its own pets goes (which outdates it by that pet) or one lands before its
-- 20th. Null unless the name changed. The counts read the index on (category_id, name, id, status)
-- from the category's start, in the database's own collation (the one the pages are ordered by): not
-- back from the new name, where a pet renamed again and again leaves the dead entries of its old names.
--
-- Everything else is as before (*_update_pet_function): the same locks, outcomes and row.
DROP FUNCTION update_pet(bigint, text, bigint, "PetStatus");

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
  IF new_name IS NOT NULL THEN
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
