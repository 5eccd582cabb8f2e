import { z } from 'zod';
import { oneRow, type PrismaClient } from '../database/client.js';
import { conflict, isForeignKeyViolation, isUniqueViolation, notFound } from '../errors.js';
import type { Category, Pet, Prisma } from '../generated/prisma/client.js';
import type { PetStatus } from '../generated/prisma/enums.js';
import { type Loading, loadsBeyond, readWith } from './loading.js';
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

const nameTaken = (categoryName: string) => conflict(`A category named "${categoryName}" already exists.`);
const noCategory = (id: bigint) => notFound(`Category ${id} does not exist.`);

/**
 * One INSERT, of the gateway's own on the pool (as createPet). The name's unique index decides
 * whether it is taken, so two categories of one name added at once cannot both be written: the
 * second waits for the first and is refused, which becomes the name's CONFLICT.
 */
export async function createCategory(db: PrismaClient, input: CategoryInput): Promise<Category> {
  const data = validate(newCategory, input);
  const categoryDescription = data.description ?? null;
  try {
    const row = await oneRow<CreatedCategoryRow>(db, CREATE_CATEGORY, [data.name, categoryDescription]);
    return { id: BigInt(row.id), name: data.name, description: categoryDescription, createdAt: row.created_at, updatedAt: row.updated_at };
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(data.name);
    throw error;
  }
}

interface CreatedCategoryRow {
  /** int8: pg's text, or Prisma's bigint. */
  id: string | bigint;
  created_at: Date;
  updated_at: Date;
}

// updated_at as Prisma's @updatedAt would set it.
const CREATE_CATEGORY = 'INSERT INTO categories (name, description, updated_at) VALUES ($1, $2, now()) RETURNING id, created_at, updated_at';

/**
 * One UPDATE … RETURNING (no row: NOT_FOUND; a name another category has: the unique index refuses
 * it, CONFLICT). A name left out keeps the name, a description left out the description, a null
 * one clears it. With nothing to change it writes nothing, as Prisma's update of no fields: one
 * read of the category.
 */
export async function updateCategory(db: PrismaClient, id: bigint, input: CategoryInput): Promise<Category> {
  const data = validate(categoryChanges, input);
  const describes = data.description !== undefined;
  let row: CategoryRow | undefined;
  try {
    row =
      data.name === undefined && !describes
        ? await oneRow<CategoryRow | undefined>(db, READ_CATEGORY, [id])
        : await oneRow<CategoryRow | undefined>(db, UPDATE_CATEGORY, [id, data.name ?? null, describes, data.description ?? null]);
  } catch (error) {
    if (data.name !== undefined && isUniqueViolation(error)) throw nameTaken(data.name);
    throw error;
  }
  if (!row) throw noCategory(id);
  return { id, name: row.name, description: row.description, createdAt: row.created_at, updatedAt: row.updated_at };
}

interface CategoryRow {
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

// updated_at as Prisma's @updatedAt would set it.
const UPDATE_CATEGORY = `UPDATE categories AS c
  SET name = COALESCE($2::text, c.name),
      description = CASE WHEN $3::boolean THEN $4::text ELSE c.description END,
      updated_at = now()
  WHERE c.id = $1::bigint
  RETURNING c.name, c.description, c.created_at, c.updated_at`;
const READ_CATEGORY = 'SELECT c.name, c.description, c.created_at, c.updated_at FROM categories AS c WHERE c.id = $1::bigint';

/** A category's own columns: an answer that asks for nothing else is the row delete_category gives back. */
const CATEGORY_COLUMNS = ['id', 'name', 'description', 'createdAt', 'updatedAt'] as const;

/**
 * Refused while any pet belongs to it (the foreign key enforces it too). Returns the category as
 * it was, with the relations in `loading`. One statement, the database function delete_category
 * (its migration says what it locks and counts), when `loading` asks for no relation. Otherwise the
 * category is locked and read with them first, and the function deletes it, in one transaction: the
 * answer is the category exactly as it went.
 */
export async function deleteCategory(
  db: PrismaClient,
  id: bigint,
  loading: Loading<Prisma.CategoryInclude, Prisma.CategorySelect> = {},
): Promise<Category> {
  if (!loadsBeyond(loading, CATEGORY_COLUMNS)) return deletedCategory(await oneRow<DeleteCategoryRow>(db, DELETE_CATEGORY, [id]), id);
  return db.$transaction(async (tx) => {
    // Locked first, as the function locks it: what is read is what it deletes.
    if (!(await lockCategoryToDelete(tx, id))) throw noCategory(id);
    const category = await readWith<Category, Prisma.CategoryDefaultArgs>(loading, (shape) =>
      tx.category.findUniqueOrThrow({ ...shape, where: { id } }),
    );
    deletedCategory(await oneRow<DeleteCategoryRow>(tx, DELETE_CATEGORY, [id]), id);
    return category;
  });
}

/** What the database function delete_category answers (prisma/migrations/*_delete_functions). */
interface DeleteCategoryRow {
  outcome: 'deleted' | 'no category' | 'has pets';
  pet_count: number | null;
  category_name: string | null;
  category_description: string | null;
  category_created_at: Date | null;
  category_updated_at: Date | null;
}

const DELETE_CATEGORY = 'SELECT * FROM delete_category($1::bigint)';

/** The category the row says was deleted; throws the domain's error for a refusal. */
function deletedCategory(row: DeleteCategoryRow, id: bigint): Category {
  if (row.outcome === 'no category') throw noCategory(id);
  if (row.outcome === 'has pets') {
    const pets = row.pet_count!;
    throw conflict(`Category ${id} still has ${pets} pet${pets === 1 ? '' : 's'}; move or delete them first.`);
  }
  return {
    id,
    name: row.category_name!,
    description: row.category_description,
    createdAt: row.category_created_at!,
    updatedAt: row.category_updated_at!,
  };
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
 * committed. Where a rename lands is counted only when something reads it.
 */
export async function updatePet(db: PrismaClient, events: EventPublisher, id: bigint, input: PetInput): Promise<Pet> {
  const { status, ...data } = validate(petChanges, input);
  const values = [id, data.name ?? null, data.categoryId ?? null, status ?? null];
  const row = await oneRow<UpdatePetRow>(db, events.readsNameRanks?.() ? UPDATE_PET_WITH_NAME_RANK : UPDATE_PET, values);
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
  // The fields given, for the answers it outdates (a rename: the name-ordered pages of the category it is in,
  // the first pages only when it lands among them).
  const nameRank = row.name_rank == null ? undefined : { inCategory: row.name_rank, inStatus: row.name_rank_in_status! };
  events.publish(petChanged(updated, Object.keys(input).filter((field) => input[field as keyof PetInput] != null), nameRank));
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
  /** A rename's: pets of its category before it by name, and of those, in its status (among the category's first 100 by name). */
  name_rank: number | null;
  name_rank_in_status: number | null;
}

const UPDATE_PET = `SELECT * FROM update_pet($1::bigint, $2::text, $3::bigint, $4::"PetStatus", with_name_rank => false)`;
const UPDATE_PET_WITH_NAME_RANK = `SELECT * FROM update_pet($1::bigint, $2::text, $3::bigint, $4::"PetStatus", with_name_rank => true)`;

const noPet = (id: bigint) => notFound(`Pet ${id} does not exist.`);

/** A pet's own columns: an answer that asks for nothing else is the row delete_pet gives back. */
const PET_COLUMNS = ['id', 'name', 'categoryId', 'status', 'createdAt', 'updatedAt'] as const;

/**
 * Refused while the pet has an open order. Its finished orders and its inventory entry go with it,
 * in the same transaction. Returns the pet as it was, with the relations in `loading`. One
 * statement, the database function delete_pet (its migration says what it locks and counts), when
 * `loading` asks for no relation. Otherwise the pet is locked and read with them first, and the
 * function deletes it, in one transaction: the answer is the pet exactly as it went.
 */
export async function deletePet(
  db: PrismaClient,
  id: bigint,
  loading: Loading<Prisma.PetInclude, Prisma.PetSelect> = {},
): Promise<Pet> {
  if (!loadsBeyond(loading, PET_COLUMNS)) return deletedPet(await oneRow<DeletePetRow>(db, DELETE_PET, [id]), id);
  return db.$transaction(async (tx) => {
    // Locked first, as the function locks it (so no order can be placed for it meanwhile): what is read is what it deletes.
    if (!(await lockPetToDelete(tx, id))) throw noPet(id);
    const pet = await readWith<Pet, Prisma.PetDefaultArgs>(loading, (shape) => tx.pet.findUniqueOrThrow({ ...shape, where: { id } }));
    deletedPet(await oneRow<DeletePetRow>(tx, DELETE_PET, [id]), id);
    return pet;
  });
}

/** What the database function delete_pet answers (prisma/migrations/*_delete_functions). */
interface DeletePetRow {
  outcome: 'deleted' | 'no pet' | 'has open orders';
  open_orders: number | null;
  pet_name: string | null;
  /** int8: pg's text, or Prisma's bigint. */
  pet_category_id: string | bigint | null;
  pet_status: PetStatus | null;
  pet_created_at: Date | null;
  pet_updated_at: Date | null;
}

const DELETE_PET = 'SELECT * FROM delete_pet($1::bigint)';

/** The pet the row says was deleted; throws the domain's error for a refusal. */
function deletedPet(row: DeletePetRow, id: bigint): Pet {
  if (row.outcome === 'no pet') throw noPet(id);
  if (row.outcome === 'has open orders') {
    const openOrders = row.open_orders!;
    throw conflict(`Pet ${id} has ${openOrders} open order${openOrders === 1 ? '' : 's'}; complete or cancel them first.`);
  }
  return {
    id,
    name: row.pet_name!,
    categoryId: BigInt(row.pet_category_id!),
    status: row.pet_status!,
    createdAt: row.pet_created_at!,
    updatedAt: row.pet_updated_at!,
  };
}
