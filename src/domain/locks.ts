import type { PetStatus } from '../generated/prisma/enums.js';
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
 * update_pet (*_update_pet_function) the new category, then the pet.
 */

export interface LockedPet {
  id: bigint;
  status: PetStatus;
}

/**
 * Locks a pet's row: `update` to delete it, `write` (NO KEY UPDATE) for any
 * other change to it or its stock and orders. undefined when it does not exist.
 */
export async function lockPet(tx: Tx, id: bigint, mode: 'write' | 'update' = 'write'): Promise<LockedPet | undefined> {
  const rows =
    mode === 'update'
      ? await tx.$queryRaw<LockedPet[]>`SELECT id, status::text AS status FROM pets WHERE id = ${id} FOR UPDATE`
      : await tx.$queryRaw<LockedPet[]>`SELECT id, status::text AS status FROM pets WHERE id = ${id} FOR NO KEY UPDATE`;
  return rows[0];
}

/**
 * Locks a category's row: `update` to delete it; `share` (KEY SHARE) to add or
 * move a pet into it, so it cannot be deleted meanwhile. false when it does not exist.
 */
export async function lockCategory(tx: Tx, id: bigint, mode: 'share' | 'update'): Promise<boolean> {
  const rows =
    mode === 'update'
      ? await tx.$queryRaw<{ id: bigint }[]>`SELECT id FROM categories WHERE id = ${id} FOR UPDATE`
      : await tx.$queryRaw<{ id: bigint }[]>`SELECT id FROM categories WHERE id = ${id} FOR KEY SHARE`;
  return rows.length > 0;
}
