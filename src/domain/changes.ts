import type { DomainEvent, NameRank } from './events.js';

/**
 * What a write changes, in the domain's words, declared beside each mutation
 * (src/schema/*.ts, with `plannedWrite()`). The response cache reads it to know
 * which answers a write outdates; a mutation that declares nothing outdates
 * every answer, and a test fails for it.
 */
export type Entity = 'Category' | 'Pet' | 'Order' | 'InventoryItem';

export type Change =
  /** A new row: the lists of its type. */
  | { added: Entity }
  /**
   * That row, and the lists it is in, ordered or filtered by what changed: `fields` when only some
   * fields can change (a rename moves a pet only in lists ordered by name); every list when absent.
   * `ofPet`: the row belongs to that pet (an order), whose own lists change too. `inCategory`: the
   * category a changed pet is in after the write, when the write says (a rename that does not
   * outdates every list of pets). `nameRank`: where a renamed pet's new name landed in that category's
   * order by name (a rename that does not say outdates every first page by name of the category).
   */
  | { changed: Entity; id: string; fields?: readonly string[]; ofPet?: string; inCategory?: string; nameRank?: NameRank & { status: string } }
  /** That row gone; or, with `ofPet` and no id, every row of that pet's (a pet's orders going with it). */
  | { removed: Entity; id?: string; ofPet?: string };

/** A mutation's changes, from its arguments as sent (ids are decimal strings). */
export type ChangeRule = (args: Record<string, unknown>) => Change[];

/**
 * A mutation whose changes are told by the domain events it publishes after commit (the order, the
 * stock, the pet's status), which `changesOfEvent` reads: its arguments alone cannot say what moved.
 */
export const TOLD_BY_EVENTS = 'told by its events';

export type ChangeDeclaration = ChangeRule | typeof TOLD_BY_EVENTS;

/** What a published event says changed. */
export function changesOfEvent(event: DomainEvent): Change[] {
  switch (event.type) {
    case 'inventoryChanged': {
      const { petId, status, previousStatus } = event.payload;
      // A count that leaves the status where it was moves the entry in no list (they are by status, then pet).
      return [{ changed: 'InventoryItem', id: petId, fields: status === previousStatus ? ['quantity'] : ['quantity', 'status'] }];
    }
    case 'orderChanged':
      return [{ changed: 'Order', id: event.payload.order.id, ofPet: event.payload.order.petId }];
    case 'petStatusChanged':
      return [{ changed: 'Pet', id: event.payload.pet.id, fields: ['status'] }];
    case 'petChanged':
      return [
        {
          changed: 'Pet',
          id: event.payload.pet.id,
          fields: event.payload.fields,
          inCategory: event.payload.pet.categoryId,
          ...(event.payload.nameRank ? { nameRank: { ...event.payload.nameRank, status: event.payload.pet.status } } : {}),
        },
      ];
  }
}
