import type { Tx } from './transaction.js';

/**
 * Row locks of the writes, taken in one order everywhere so that no two
 * transactions can wait on each other:
 *
 *   category → pet → order → inventory entry
 *
 * Every write that changes a pet's status, stock or orders first locks the
 * pet's row. That serialises them per pet: concurrent orders can never take
 * more than is in stock, and a pet cannot be deleted while an order for it is
 * being placed. (Inserting an order or an inventory entry also takes a key
 * share lock on the pet for the foreign key; a pet lock taken up front means
 * that one never has to wait.) The database functions that write in one
 * statement take their locks in the same order: place_order
 * (prisma/migrations/*_place_order_function) and set_stock
 * (*_set_stock_function) the pet, then its inventory entry; close_order
 * (*_close_order_function) the pet, then the order, then its entry;
 * update_pet (*_update_pet_function) the new category, then the pet;
 * delete_category (*_delete_functions) the category, then counts its pets;
 * delete_pet (*_delete_functions) the pet, then deletes its orders and (by
 * cascade) its inventory entry. Adding a pet is one INSERT, whose foreign key
 * share-locks its category. The only locks still taken here are those of a
 * delete whose answer selects a relation: the row is locked and read with it
 * first, then the same function deletes it, in one transaction.
 */

/** Locks a pet's row to delete it (FOR UPDATE). false when it does not exist. */
export async function lockPetToDelete(tx: Tx, id: bigint): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: bigint }[]>`SELECT id FROM pets WHERE id = ${id} FOR UPDATE`;
  return rows.length > 0;
}

/** Locks a category's row to delete it (FOR UPDATE). false when it does not exist. */
export async function lockCategoryToDelete(tx: Tx, id: bigint): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: bigint }[]>`SELECT id FROM categories WHERE id = ${id} FOR UPDATE`;
  return rows.length > 0;
}
