import { z } from 'zod';
import { oneRow, type PrismaClient } from '../database/client.js';
import { conflict, isForeignKeyViolation, notFound } from '../errors.js';
import type { Category, Pet, Prisma } from '../generated/prisma/client.js';
import type { PetStatus } from '../generated/prisma/enums.js';
import { type Loading, readWith } from './loading.js';
import { lockCategoryToDelete, lockPetToDelete } from './locks.js';
import { type EventPublisher, petChanged, petStatusChanged } from './events.js';
import { description, name, validate } from './validation.js';

/** Categories and pets: what may be written, and what is refused. */

const newCategory = z.object({ name, description: description.nullish() });
const categoryChanges = z.object({ name: name.optional(), description: description.nullish() });

export interface CategoryInput {
  name?: string | null;
  description?: string | null;
}

export async function createCategory(db: PrismaClient, input: CategoryInput) {
  const data = validate(newCategory, input);
  await refuseTakenCategoryName(db, data.name);
  return db.category.create({ data });
}

export async function updateCategory(db: PrismaClient, id: bigint, input: CategoryInput) {
  const data = validate(categoryChanges, input);
  await findCategory(db, id);
  if (data.name) await refuseTakenCategoryName(db, data.name, id);
  return db.category.update({ where: { id }, data });
}

/**
 * Refused while any pet belongs to the category (the foreign key enforces it
 * too). Returns the category as it was, with the relations in `loading`.
 */
export async function deleteCategory(
  db: PrismaClient,
  id: bigint,
  loading: Loading<Prisma.CategoryInclude, Prisma.CategorySelect> = {},
): Promise<Category> {
  return db.$transaction(async (tx) => {
    // Locked first: a pet being added to it meanwhile is either counted below or finds it gone.
    if (!(await lockCategoryToDelete(tx, id))) throw notFound(`Category ${id} does not exist.`);
    const category = await readWith<Category, Prisma.CategoryDefaultArgs>(loading, (shape) =>
      tx.category.findUniqueOrThrow({ ...shape, where: { id } }),
    );
    const pets = await tx.pet.count({ where: { categoryId: id } });
    if (pets > 0) {
      throw conflict(`Category ${id} still has ${pets} pet${pets === 1 ? '' : 's'}; move or delete them first.`);
    }
    await tx.category.delete({ where: { id } });
    return category;
  });
}

async function refuseTakenCategoryName(db: Pick<PrismaClient, 'category'>, categoryName: string, except?: bigint) {
  const taken = await db.category.findUnique({ where: { name: categoryName }, select: { id: true } });
  if (taken && taken.id !== except) throw conflict(`A category named "${categoryName}" already exists.`);
}

async function findCategory(db: Pick<PrismaClient, 'category'>, id: bigint) {
  const category = await db.category.findUnique({ where: { id } });
  if (!category) throw notFound(`Category ${id} does not exist.`);
  return category;
}

const petStatus = z.enum(['available', 'pending', 'sold']);
const newPet = z.object({ name, categoryId: z.bigint(), status: petStatus.nullish() });
const petChanges = z.object({ name: name.optional(), categoryId: z.bigint().optional(), status: petStatus.nullish() });

export interface PetInput {
  name?: string | null;
  categoryId?: bigint | null;
  status?: PetStatus | null;
}

/**
 * One INSERT, of the gateway's own (on the pool, not through Prisma's request pipeline, as the other
 * one-statement writes). Its foreign key check share-locks the category (KEY SHARE, the lock
 * locks.ts takes to add a pet to one), so a category being deleted meanwhile either waits for it and
 * then refuses, or is gone and the insert is refused: that refusal is the category's NOT_FOUND.
 * Without a status given, the table's default decides it.
 */
export async function createPet(db: PrismaClient, input: PetInput): Promise<Pet> {
  const { status, ...data } = validate(newPet, input);
  try {
    const row = await oneRow<CreatedPetRow>(db, status ? CREATE_PET_WITH_STATUS : CREATE_PET, [data.name, data.categoryId, ...(status ? [status] : [])]);
    return { id: BigInt(row.id), name: data.name, categoryId: data.categoryId, status: row.status, createdAt: row.created_at, updatedAt: row.updated_at };
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound(`Category ${data.categoryId} does not exist.`);
    throw error;
  }
}

interface CreatedPetRow {
  /** int8: pg's text, or Prisma's bigint. */
  id: string | bigint;
  status: PetStatus;
  created_at: Date;
  updated_at: Date;
}

// updated_at as Prisma's @updatedAt would set it.
const CREATED = 'RETURNING id, status::text AS status, created_at, updated_at';
const CREATE_PET = `INSERT INTO pets (name, category_id, updated_at) VALUES ($1, $2::bigint, now()) ${CREATED}`;
const CREATE_PET_WITH_STATUS = `INSERT INTO pets (name, category_id, status, updated_at) VALUES ($1, $2::bigint, $3::"PetStatus", now()) ${CREATED}`;

/**
 * A pet with an inventory entry carries the entry's status, so its status
 * cannot be set by hand; one without keeps the status it is given. One
 * statement, the database function update_pet (its migration says what it
 * locks and checks); the event of a status change is published once it has
 * committed.
 */
export async function updatePet(db: PrismaClient, events: EventPublisher, id: bigint, input: PetInput): Promise<Pet> {
  const { status, ...data } = validate(petChanges, input);
  const values = [id, data.name ?? null, data.categoryId ?? null, status ?? null];
  const row = await oneRow<UpdatePetRow>(db, UPDATE_PET, values);
  if (row.outcome === 'no pet') throw notFound(`Pet ${id} does not exist.`);
  if (row.outcome === 'no category') throw notFound(`Category ${data.categoryId} does not exist.`);
  if (row.outcome === 'status follows stock') {
    throw conflict(`Pet ${id} has an inventory entry, so its status follows its stock; change the stock instead.`);
  }
  const updated: Pet = {
    id,
    name: row.pet_name!,
    categoryId: BigInt(row.pet_category_id!),
    status: row.pet_status!,
    createdAt: row.pet_created_at!,
    updatedAt: row.pet_updated_at!,
  };
  // The fields given, for the answers it outdates (a rename: the name-ordered pages of the category it is in).
  events.publish(petChanged(updated, Object.keys(input).filter((field) => input[field as keyof PetInput] != null)));
  if (updated.status !== row.previous_status) events.publish(petStatusChanged(updated, row.previous_status!));
  return updated;
}

interface UpdatePetRow {
  outcome: 'updated' | 'no pet' | 'no category' | 'status follows stock';
  pet_name: string | null;
  /** int8: pg's text, or Prisma's bigint. */
  pet_category_id: string | bigint | null;
  pet_status: PetStatus | null;
  previous_status: PetStatus | null;
  pet_created_at: Date | null;
  pet_updated_at: Date | null;
}

const UPDATE_PET = `SELECT * FROM update_pet($1::bigint, $2::text, $3::bigint, $4::"PetStatus")`;

/**
 * Refused while the pet has an open order. Its finished orders and its
 * inventory entry go with it, in the same transaction. Returns the pet as it
 * was, with the relations in `loading`.
 */
export async function deletePet(
  db: PrismaClient,
  id: bigint,
  loading: Loading<Prisma.PetInclude, Prisma.PetSelect> = {},
): Promise<Pet> {
  return db.$transaction(async (tx) => {
    // Lock the pet so that no order can be placed for it while it is deleted.
    if (!(await lockPetToDelete(tx, id))) throw notFound(`Pet ${id} does not exist.`);
    const openOrders = await tx.order.count({ where: { petId: id, complete: false } });
    if (openOrders > 0) {
      throw conflict(
        `Pet ${id} has ${openOrders} open order${openOrders === 1 ? '' : 's'}; complete or cancel them first.`,
      );
    }
    const pet = await readWith<Pet, Prisma.PetDefaultArgs>(loading, (shape) =>
      tx.pet.findUniqueOrThrow({ ...shape, where: { id } }),
    );
    await tx.order.deleteMany({ where: { petId: id } });
    await tx.pet.delete({ where: { id } });
    return pet;
  });
}
