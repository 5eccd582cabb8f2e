-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "PetStatus" AS ENUM ('available', 'pending', 'sold');

-- CreateTable
CREATE TABLE "categories" (
    "id" BIGSERIAL NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "description" VARCHAR(1000),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "categories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pets" (
    "id" BIGSERIAL NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "category_id" BIGINT NOT NULL,
    "status" "PetStatus" NOT NULL DEFAULT 'available',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "pets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "orders" (
    "id" BIGSERIAL NOT NULL,
    "pet_id" BIGINT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "ship_date" TIMESTAMPTZ(3),
    "complete" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inventory_items" (
    "pet_id" BIGINT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "status" "PetStatus" NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "inventory_items_pkey" PRIMARY KEY ("pet_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "categories_name_key" ON "categories"("name");

-- CreateIndex
CREATE INDEX "pets_status_id_idx" ON "pets"("status", "id");

-- CreateIndex
CREATE INDEX "pets_category_id_id_idx" ON "pets"("category_id", "id");

-- CreateIndex
CREATE INDEX "orders_pet_id_complete_idx" ON "orders"("pet_id", "complete");

-- CreateIndex
CREATE INDEX "orders_complete_id_idx" ON "orders"("complete", "id");

-- CreateIndex
CREATE INDEX "inventory_items_status_idx" ON "inventory_items"("status");

-- AddForeignKey
ALTER TABLE "pets" ADD CONSTRAINT "pets_category_id_fkey" FOREIGN KEY ("category_id") REFERENCES "categories"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_pet_id_fkey" FOREIGN KEY ("pet_id") REFERENCES "pets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_pet_id_fkey" FOREIGN KEY ("pet_id") REFERENCES "pets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand: rules the Prisma schema language cannot state. The domain
-- checks them too, with friendlier errors; these make them hold for any writer.
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_quantity_not_negative" CHECK ("quantity" >= 0);
ALTER TABLE "orders" ADD CONSTRAINT "orders_quantity_positive" CHECK ("quantity" > 0);
ALTER TABLE "categories" ADD CONSTRAINT "categories_name_not_blank" CHECK (btrim("name") <> '');
ALTER TABLE "pets" ADD CONSTRAINT "pets_name_not_blank" CHECK (btrim("name") <> '');
