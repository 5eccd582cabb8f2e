-- CreateTable
CREATE TABLE "row_counts" (
    "slot" SMALLINT NOT NULL,
    "categories" BIGINT NOT NULL DEFAULT 0,
    "pets" BIGINT NOT NULL DEFAULT 0,
    "orders" BIGINT NOT NULL DEFAULT 0,
    "inventory_items" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "row_counts_pkey" PRIMARY KEY ("slot")
);

-- Written by hand: the triggers that keep row_counts (docs/performance.md, "Counts"). A list without a
-- filter is counted as the sum of its column here, in one index scan of a few rows, however long the
-- list; with a filter it is still counted row by row, up to the limit (src/pothos-plugins/paging.ts).
--
-- Each INSERT or DELETE statement on a counted table adds how many rows it inserted or deleted (its
-- transition table) to one row of row_counts, in the same transaction: a count read by one statement
-- sees exactly the rows its snapshot sees, and a write rolled back takes its addition with it. The row
-- is the first no other transaction holds (SKIP LOCKED), so concurrent writers never wait for one
-- another here and cannot deadlock on these rows; when every row is held, the writer adds one (as many
-- rows, at most, as there are writers at once). A
-- statement that changed nothing touches no row. Deletes cascaded from another table (a pet's
-- inventory entry) fire the trigger of the table they delete from; TRUNCATE takes away the table's count.
--
-- The tables are locked against writers (SHARE) before they are counted, so that no write falls between
-- the count and the trigger that would have counted it: this script runs as one transaction.
LOCK TABLE "categories", "pets", "orders", "inventory_items" IN SHARE MODE;

INSERT INTO "row_counts" ("slot") SELECT generate_series(0, 15);
CREATE SEQUENCE "row_counts_slot" AS SMALLINT START 16 OWNED BY "row_counts"."slot";
UPDATE "row_counts" SET
  "categories" = (SELECT count(*) FROM "categories"),
  "pets" = (SELECT count(*) FROM "pets"),
  "orders" = (SELECT count(*) FROM "orders"),
  "inventory_items" = (SELECT count(*) FROM "inventory_items")
WHERE "slot" = 0;

CREATE FUNCTION count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  added bigint;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    -- Taken away whole. No writer of the table can hold a row of it meanwhile (TRUNCATE holds the table
    -- against every other), so the sum is its count, and the rows writers of other tables hold are not waited for.
    SELECT -sum(CASE TG_TABLE_NAME WHEN 'categories' THEN categories WHEN 'pets' THEN pets
                                   WHEN 'orders' THEN orders ELSE inventory_items END)
      INTO added FROM row_counts;
  ELSE
    SELECT count(*) INTO added FROM changed_rows;
    IF TG_OP = 'DELETE' THEN
      added := -added;
    END IF;
  END IF;
  IF added = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE row_counts SET
    categories = categories + CASE TG_TABLE_NAME WHEN 'categories' THEN added ELSE 0 END,
    pets = pets + CASE TG_TABLE_NAME WHEN 'pets' THEN added ELSE 0 END,
    orders = orders + CASE TG_TABLE_NAME WHEN 'orders' THEN added ELSE 0 END,
    inventory_items = inventory_items + CASE TG_TABLE_NAME WHEN 'inventory_items' THEN added ELSE 0 END
  WHERE slot = (SELECT slot FROM row_counts ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED);
  IF NOT FOUND THEN
    -- Every row is held by a writer still in its transaction: a row of its own for this one, numbered by
    -- a sequence, which no other writer waits for.
    INSERT INTO row_counts (slot, categories, pets, orders, inventory_items) VALUES (
      nextval('row_counts_slot'),
      CASE TG_TABLE_NAME WHEN 'categories' THEN added ELSE 0 END,
      CASE TG_TABLE_NAME WHEN 'pets' THEN added ELSE 0 END,
      CASE TG_TABLE_NAME WHEN 'orders' THEN added ELSE 0 END,
      CASE TG_TABLE_NAME WHEN 'inventory_items' THEN added ELSE 0 END);
  END IF;
  RETURN NULL;
END $$;

-- The same three triggers on each counted table: <table>_inserted_counted, _deleted_counted, _truncated_counted.
DO $$
DECLARE
  counted text;
BEGIN
  FOREACH counted IN ARRAY ARRAY['categories', 'pets', 'orders', 'inventory_items'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS changed_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION count_rows()', counted || '_inserted_counted', counted);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS changed_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION count_rows()', counted || '_deleted_counted', counted);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION count_rows()',
                   counted || '_truncated_counted', counted);
  END LOOP;
END $$;
