-- Pages read from an index in their own order, whatever their filter's value (docs/performance.md,
-- "Pages in index order").
--
-- Pets in name order (pets(orderBy: { field: NAME }), with or without a category or a status): at
-- 100,000 pets a category's name-ordered page sorted some 2,000 rows per request. A category's page
-- keys on (category_id, name, id), with status in the key so that a status filter is checked in the
-- index; the whole list, or one status, walks (name, id).
--
-- Stock entries of one status in pet order (inventory(filter: { status })): with an index on status
-- alone, the prepared statement's generic plan walks the primary key and filters, which for a status
-- few entries have reads every entry (40 ms at 100,000). (status, pet_id) gives every status its page
-- in order; it replaces the index on status, which it also serves. The new index is built before the
-- old one goes, so no moment is without one.

-- CreateIndex
CREATE INDEX "pets_category_id_name_id_status_idx" ON "pets"("category_id", "name", "id", "status");

-- CreateIndex
CREATE INDEX "pets_name_id_idx" ON "pets"("name", "id");

-- CreateIndex
CREATE INDEX "inventory_items_status_pet_id_idx" ON "inventory_items"("status", "pet_id");

-- DropIndex
DROP INDEX "inventory_items_status_idx";
