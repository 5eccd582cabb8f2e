import { z } from 'zod';
import type { PrismaClient } from '../database/client.js';
import { conflict, notFound } from '../errors.js';
import type { Category, Pet, Prisma } from '../generated/prisma/client.js';
import type { PetStatus } from '../generated/prisma/enums.js';
import { type Loading, readWith } from './loading.js';
import { lockCategory, lockPet } from './locks.js';
import { type EventPublisher, petStatusChanged, transactionWithEvents } from './events.js';
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
    if (!(await lockCategory(tx, id, 'update'))) throw notFound(`Category ${id} does not exist.`);
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

export async function createPet(db: PrismaClient, input: PetInput) {
  const { status, ...data } = validate(newPet, input);
  return db.$transaction(async (tx) => {
    // The category is share-locked so that it cannot be deleted while the pet is added to it.
    if (!(await lockCategory(tx, data.categoryId, 'share'))) {
      throw notFound(`Category ${data.categoryId} does not exist.`);
    }
    return tx.pet.create({ data: { ...data, ...(status ? { status } : {}) } });
  });
}

/**
 * A pet with an inventory entry carries the entry's status, so its status
 * cannot be set by hand; one without keeps the status it is given.
 */
export async function updatePet(db: PrismaClient, events: EventPublisher, id: bigint, input: PetInput) {
  const { status, ...data } = validate(petChanges, input);
  return transactionWithEvents(db, events, async (tx, record) => {
    // Locks in the one order (locks.ts): the new category, then the pet, whose
    // status stock writes may be changing at the same moment.
    const categoryExists = data.categoryId === undefined || (await lockCategory(tx, data.categoryId, 'share'));
    if (!(await lockPet(tx, id))) throw notFound(`Pet ${id} does not exist.`);
    if (!categoryExists) throw notFound(`Category ${data.categoryId} does not exist.`);
    const pet = await tx.pet.findUniqueOrThrow({ where: { id }, include: { inventory: { select: { status: true } } } });
    if (status && pet.inventory && status !== pet.inventory.status) {
      throw conflict(`Pet ${id} has an inventory entry, so its status follows its stock; change the stock instead.`);
    }
    const updated = await tx.pet.update({ where: { id }, data: { ...data, ...(status ? { status } : {}) } });
    if (updated.status !== pet.status) record(petStatusChanged(updated, pet.status));
    return updated;
  });
}

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
    if (!(await lockPet(tx, id, 'update'))) throw notFound(`Pet ${id} does not exist.`);
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
