-- A category's page of pets (Category.pets, pets(filter: { categoryId })) in id order, read from the
-- index alone: name and status join the key, so PostgreSQL answers the page with an index-only scan
-- of (category_id, id) instead of walking the primary key and filtering out every other category's
-- pets (docs/performance.md, "Nested lists"). The new index is built before the old one goes, so no
-- moment is without one.

-- CreateIndex
CREATE INDEX "pets_category_id_id_name_status_idx" ON "pets"("category_id", "id", "name", "status");

-- DropIndex
DROP INDEX "pets_category_id_id_idx";
