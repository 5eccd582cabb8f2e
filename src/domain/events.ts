import type { PrismaClient } from '../database/client.js';
import type { Order, Pet } from '../generated/prisma/client.js';
import type { PetStatus } from '../generated/prisma/enums.js';
import type { Tx } from './transaction.js';

/**
 * What the domain tells the world after a write commits. Payloads are plain
 * JSON (ids as decimal strings, dates as ISO text) because they may travel
 * through Redis to other gateway instances.
 */
export interface InventoryChanged {
  petId: string;
  quantity: number;
  status: PetStatus;
  /** The entry's status before the write (null: it had none): the same unless the count moved it. */
  previousStatus: PetStatus | null;
}

export type OrderChangeKind = 'placed' | 'completed' | 'cancelled';

export interface OrderChanged {
  change: OrderChangeKind;
  order: { id: string; petId: string; quantity: number; shipDate: string | null; complete: boolean };
}

export interface PetStatusChanged {
  pet: { id: string; name: string; categoryId: string; status: PetStatus };
  previousStatus: PetStatus;
}

/**
 * How many pets of its category come before a renamed pet by name (then id), and how many of those have
 * its status, counted among the category's first 100 by name (update_pet): 100 means 100 or more, and the count in its
 * status is then a lower bound.
 */
export interface NameRank {
  inCategory: number;
  inStatus: number;
}

/** A pet's own fields written (updatePet): `fields`, of those the caller gave. No subscription carries it. */
export interface PetChanged {
  pet: { id: string; name: string; categoryId: string; status: PetStatus };
  fields: string[];
  /** A rename's: where the new name landed among its category's pets by name (update_pet). */
  nameRank?: NameRank;
}

export type DomainEvent =
  | { type: 'inventoryChanged'; payload: InventoryChanged }
  | { type: 'orderChanged'; payload: OrderChanged }
  | { type: 'petStatusChanged'; payload: PetStatusChanged }
  | { type: 'petChanged'; payload: PetChanged };

export interface EventPublisher {
  publish(event: DomainEvent): void;
  /**
   * Whether anything that hears the events now reads where a rename lands (PetChanged.nameRank): counting it
   * costs the database a scan of the category, and without it a rename only outdates more. Absent: nothing does.
   */
  readsNameRanks?(): boolean;
}

/** For callers that need no events (seeding, scripts). */
export const noEvents: EventPublisher = { publish() {} };

type Record = (event: DomainEvent) => void;

/**
 * Runs `work` in one transaction and publishes the events it recorded only
 * once the transaction has committed: a rolled-back write tells no one.
 */
export async function transactionWithEvents<T>(
  db: PrismaClient,
  events: EventPublisher,
  work: (tx: Tx, record: Record) => Promise<T>,
): Promise<T> {
  const recorded: DomainEvent[] = [];
  const result = await db.$transaction((tx) => work(tx, (event) => recorded.push(event)));
  for (const event of recorded) events.publish(event);
  return result;
}

export const orderChanged = (change: OrderChangeKind, order: Order): DomainEvent => ({
  type: 'orderChanged',
  payload: {
    change,
    order: {
      id: order.id.toString(),
      petId: order.petId.toString(),
      quantity: order.quantity,
      shipDate: order.shipDate?.toISOString() ?? null,
      complete: order.complete,
    },
  },
});

export const petStatusChanged = (
  pet: Pick<Pet, 'id' | 'name' | 'categoryId' | 'status'>,
  previousStatus: PetStatus,
): DomainEvent => ({
  type: 'petStatusChanged',
  payload: {
    pet: { id: pet.id.toString(), name: pet.name, categoryId: pet.categoryId.toString(), status: pet.status },
    previousStatus,
  },
});

export const petChanged = (pet: Pick<Pet, 'id' | 'name' | 'categoryId' | 'status'>, fields: string[], nameRank?: NameRank): DomainEvent => ({
  type: 'petChanged',
  payload: {
    pet: { id: pet.id.toString(), name: pet.name, categoryId: pet.categoryId.toString(), status: pet.status },
    fields,
    ...(nameRank ? { nameRank } : {}),
  },
});

export const inventoryChanged = (petId: bigint, quantity: number, status: PetStatus, previousStatus: PetStatus | null): DomainEvent => ({
  type: 'inventoryChanged',
  payload: { petId: petId.toString(), quantity, status, previousStatus },
});
