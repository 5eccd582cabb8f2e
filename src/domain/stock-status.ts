import type { PetStatus } from '../generated/prisma/enums.js';

/**
 * The status rule of an inventory entry, the one place it is decided:
 * `available` while there is stock; at zero, `pending` while an order for
 * the pet is still open (it may yet be cancelled and the stock come back),
 * otherwise `sold`. A pet with an inventory entry carries the entry's status.
 */
export function stockStatus(quantity: number, hasOpenOrder: boolean): PetStatus {
  if (quantity > 0) return 'available';
  return hasOpenOrder ? 'pending' : 'sold';
}
