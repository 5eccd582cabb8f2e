import { z } from 'zod';
import { oneRow, type PrismaClient } from '../database/client.js';
import { conflict, DomainError, notFound } from '../errors.js';
import type { InventoryItem, Order, Prisma } from '../generated/prisma/client.js';
import type { PetStatus } from '../generated/prisma/enums.js';
import { type Loading, loadsRelation, readWith } from './loading.js';
import type { Tx } from './transaction.js';
import {
  type DomainEvent,
  type EventPublisher,
  inventoryChanged,
  orderChanged,
  petStatusChanged,
  transactionWithEvents,
} from './events.js';
import { stockStatus } from './stock-status.js';
import { orderQuantity, shipDate, stockQuantity, validate } from './validation.js';

/**
 * Stock and orders: the state machine. Every write here is one statement, a
 * database function, that first locks the pet's row (see locks.ts for the one
 * lock order), so writes to one pet are serialised: concurrent orders can
 * never take more than is in stock, and the status is always decided from
 * what is committed. The rules the functions apply come from here: the
 * statuses (stockStatus), the errors and the events.
 */
const insufficientStock = (message: string) => new DomainError('INSUFFICIENT_STOCK', message);

/**
 * A write that is one statement (`write`, a database function): on its own it runs on the pool, its
 * own transaction, one round trip (Prisma's raw-query pipeline was 8% of an order's CPU, profiled),
 * and its events are published once it has returned, that is committed. With `readAfter` (relations
 * the caller selects), the statement and the read share a transaction, so the read shows exactly
 * what the write left, and the events are published after its COMMIT.
 */
async function oneStatement<Written extends { events: DomainEvent[] }, Answer>(
  db: PrismaClient,
  events: EventPublisher,
  write: (client: PrismaClient | Tx) => Promise<Written>,
  answer: (written: Written) => Answer,
  readAfter?: (tx: Tx, written: Written) => Promise<Answer>,
): Promise<Answer> {
  if (!readAfter) {
    const written = await write(db);
    for (const event of written.events) events.publish(event);
    return answer(written);
  }
  return transactionWithEvents(db, events, async (tx, record) => {
    const written = await write(tx);
    for (const event of written.events) record(event);
    return readAfter(tx, written);
  });
}

/** The order with the relations in `loading`, read in the transaction. */
function readOrder(tx: Tx, id: bigint, loading: Loading<Prisma.OrderInclude, Prisma.OrderSelect>) {
  return readWith<Order, Prisma.OrderDefaultArgs>(loading, (shape) => tx.order.findUniqueOrThrow({ ...shape, where: { id } }));
}

const inventoryUpdate = z.object({ quantity: stockQuantity });

/**
 * Sets a pet's stock count, creating its inventory entry if it has none, and
 * settles the entry's status and the pet's: one statement, the database
 * function set_stock (its migration says what it locks and checks). Returns
 * the entry; with relations in `loading`, the call and their read are one
 * transaction, so they show the state this write produced.
 */
export async function updateInventory(
  db: PrismaClient,
  events: EventPublisher,
  petId: bigint,
  input: { quantity: number },
  loading: Loading<Prisma.InventoryItemInclude, Prisma.InventoryItemSelect> = {},
) {
  const { quantity } = validate(inventoryUpdate, input);
  return oneStatement(
    db,
    events,
    async (client) => stockSet(await setStockInDatabase(client, petId, quantity), petId, quantity),
    (set) => set.entry,
    loadsRelation(loading, 'pet')
      ? (tx) => readWith<InventoryItem, Prisma.InventoryItemDefaultArgs>(loading, (shape) => tx.inventoryItem.findUniqueOrThrow({ ...shape, where: { petId } }))
      : undefined,
  );
}

/** What each stock function (set_stock, place_order, close_order) answers of the entry and the pet it settled. */
interface SettledStock {
  entry_status: PetStatus | null;
  previous_status: PetStatus | null;
  pet_name: string | null;
  /** int8: pg's text from the pool, a bigint through Prisma. */
  pet_category_id: string | bigint | null;
  /** set_stock's: the entry is new (the others settle an entry that was there). */
  entry_created?: boolean | null;
}

/** The events of a settled stock: the entry's count and status and, when that moved it, the pet's status. */
function stockEvents(petId: bigint, stock: number, row: SettledStock): DomainEvent[] {
  const status = row.entry_status!;
  // The pet carried its entry's status: the entry's before, unless there was none.
  const events = [inventoryChanged(petId, stock, status, row.entry_created ? null : row.previous_status!)];
  if (status !== row.previous_status) {
    events.push(petStatusChanged({ id: petId, name: row.pet_name!, categoryId: BigInt(row.pet_category_id!), status }, row.previous_status!));
  }
  return events;
}

/** What the database function set_stock answers (prisma/migrations/*_set_stock_function). */
interface SetStockRow extends SettledStock {
  outcome: 'set' | 'no pet';
  entry_updated_at: Date | null;
}

const SET_STOCK = `SELECT * FROM set_stock($1::bigint, $2::integer, $3::"PetStatus", $4::"PetStatus", $5::"PetStatus")`;

function setStockInDatabase(db: PrismaClient | Tx, petId: bigint, quantity: number): Promise<SetStockRow> {
  return oneRow<SetStockRow>(db, SET_STOCK, [petId, quantity, stockStatus(1, false), stockStatus(0, true), stockStatus(0, false)]);
}

/** The entry the row says was set, and the events it records: the stock and, when that changed it, the pet's status. */
function stockSet(row: SetStockRow, petId: bigint, quantity: number) {
  if (row.outcome === 'no pet') throw notFound(`Pet ${petId} does not exist.`);
  const entry: InventoryItem = { petId, quantity, status: row.entry_status!, updatedAt: row.entry_updated_at! };
  return { entry, events: stockEvents(petId, quantity, row) };
}

const newOrder = z.object({
  petId: z.bigint(),
  quantity: orderQuantity,
  shipDate: shipDate.nullish(),
});

export interface OrderInput {
  petId: bigint;
  quantity: number;
  shipDate?: Date | null;
}

/** What the database function place_order answers (prisma/migrations/*_place_order_function). */
interface PlaceOrderRow extends SettledStock {
  outcome: 'placed' | 'no pet' | 'no stock' | 'insufficient';
  stock: number | null;
  /** int8: pg's text from the pool, a bigint through Prisma. */
  order_id: string | bigint | null;
  order_created_at: Date | null;
}

const PLACE_ORDER = `SELECT * FROM place_order($1::bigint, $2::integer, $3::timestamptz, $4::"PetStatus", $5::"PetStatus")`;

/**
 * Locks the pet and its stock, checks the stock, inserts the order and
 * settles the stock and status, in one statement: the database function
 * place_order, in the lock order of locks.ts. The status rule stays in
 * stockStatus(): the function is given the two statuses this order can leave.
 * Refusals come back as the row's outcome, with nothing written.
 */
function placeOrderInDatabase(db: PrismaClient | Tx, petId: bigint, quantity: number, shipDate: Date | null): Promise<PlaceOrderRow> {
  return oneRow<PlaceOrderRow>(db, PLACE_ORDER, [petId, quantity, shipDate, stockStatus(1, true), stockStatus(0, true)]);
}

/**
 * The order the row says was placed, and the events it records: the order,
 * the stock it left and, when that changed it, the pet's status. Throws the
 * domain's error for a refusal.
 */
function placedOrder(row: PlaceOrderRow, petId: bigint, quantity: number, shipDate: Date | null) {
  if (row.outcome === 'no pet') throw notFound(`Pet ${petId} does not exist.`);
  if (row.outcome === 'no stock') throw insufficientStock(`Pet ${petId} has no stock to order.`);
  const stock = row.stock!;
  if (row.outcome === 'insufficient') {
    throw insufficientStock(
      stock === 0 ? `Pet ${petId} is out of stock.` : `Pet ${petId} has ${stock} in stock; ${quantity} were ordered.`,
    );
  }
  const order: Order = { id: BigInt(row.order_id!), petId, quantity, shipDate, complete: false, createdAt: row.order_created_at! };
  return { order, events: [orderChanged('placed', order), ...stockEvents(petId, stock - quantity, row)] };
}

/**
 * Checks and takes the stock and records the order, or refuses with
 * INSUFFICIENT_STOCK. Returns the order with the relations in `loading`, read
 * in the same transaction: the stock and status this order left.
 *
 * One statement (place_order) does the write. Without relations to load it is
 * sent on its own, its own transaction: one round trip. With them, it and the
 * read share a transaction, so the read sees exactly what this order left.
 * Either way the events are published only once it has committed.
 */
export async function placeOrder(
  db: PrismaClient,
  events: EventPublisher,
  input: OrderInput,
  loading: Loading<Prisma.OrderInclude, Prisma.OrderSelect> = {},
) {
  const { petId, quantity, shipDate } = validate(newOrder, input);
  const ship = shipDate ?? null;
  return oneStatement(
    db,
    events,
    async (client) => placedOrder(await placeOrderInDatabase(client, petId, quantity, ship), petId, quantity, ship),
    (placed) => placed.order,
    loadsRelation(loading, 'pet') ? (tx, placed) => readOrder(tx, placed.order.id, loading) : undefined,
  );
}

/** What the database function close_order answers (prisma/migrations/*_close_order_function). */
interface CloseOrderRow extends SettledStock {
  outcome: 'no order' | 'complete' | 'completed' | 'cancelled';
  pet_id: string | bigint | null;
  quantity: number | null;
  ship_date: Date | null;
  created_at: Date | null;
  /** The entry's stock after the order closed; null when the pet has no entry. */
  stock: number | null;
}

const CLOSE_ORDER = `SELECT * FROM close_order($1::bigint, $2::boolean, $3::"PetStatus", $4::"PetStatus", $5::"PetStatus")`;

type Closing = 'complete' | 'cancel';

function closeOrderInDatabase(db: PrismaClient | Tx, id: bigint, closing: Closing): Promise<CloseOrderRow> {
  return oneRow<CloseOrderRow>(db, CLOSE_ORDER, [id, closing === 'cancel', stockStatus(1, false), stockStatus(0, true), stockStatus(0, false)]);
}

const alreadyComplete: Record<Closing, (id: bigint) => string> = {
  complete: (id) => `Order ${id} is already complete.`,
  cancel: (id) => `Order ${id} is complete and can no longer be cancelled.`,
};

/**
 * The order the row says was closed (completed, or as it was before it was cancelled), and the
 * events it records: the order, the stock it left and, when that changed it, the pet's status.
 * Throws the domain's error for a refusal.
 */
function closedOrder(row: CloseOrderRow, id: bigint, closing: Closing) {
  if (row.outcome === 'no order') throw notFound(`Order ${id} does not exist.`);
  if (row.outcome === 'complete') throw conflict(alreadyComplete[closing](id));
  const petId = BigInt(row.pet_id!);
  const order: Order = { id, petId, quantity: row.quantity!, shipDate: row.ship_date, complete: closing === 'complete', createdAt: row.created_at! };
  const events = [orderChanged(closing === 'complete' ? 'completed' : 'cancelled', order)];
  if (row.stock !== null) events.push(...stockEvents(petId, row.stock, row));
  return { order, events };
}

/**
 * Completes or cancels an open order and settles its pet's stock and status: one statement, the
 * database function close_order (its migration says what it locks and checks). Returns the order;
 * with its pet in `loading`, the call and the pet's read are one transaction, so the pet shows the
 * state this write produced. A cancelled order is gone, so its pet is read by the pet's own id.
 */
async function closeOrder(
  db: PrismaClient,
  events: EventPublisher,
  id: bigint,
  closing: Closing,
  loading: Loading<Prisma.OrderInclude, Prisma.OrderSelect>,
): Promise<Order> {
  const pet = loading.select?.pet ?? loading.include?.pet;
  return oneStatement(
    db,
    events,
    async (client) => closedOrder(await closeOrderInDatabase(client, id, closing), id, closing),
    (closed) => closed.order,
    pet
      ? async (tx, closed) => ({ ...closed.order, pet: await tx.pet.findUniqueOrThrow({ where: { id: closed.order.petId }, ...(pet === true ? {} : pet) }) })
      : undefined,
  );
}

/** Marks an open order complete; its ship date becomes now unless it had one. Returns the order with the relations in `loading`. */
export function completeOrder(
  db: PrismaClient,
  events: EventPublisher,
  id: bigint,
  loading: Loading<Prisma.OrderInclude, Prisma.OrderSelect> = {},
) {
  return closeOrder(db, events, id, 'complete', loading);
}

/**
 * Cancels an open order: the order is removed and its quantity returns to
 * stock. Returns the order as it was, with the relations in `loading` as they
 * are after the cancellation (its pet's stock and status already restored).
 */
export function cancelOrder(
  db: PrismaClient,
  events: EventPublisher,
  id: bigint,
  loading: Loading<Prisma.OrderInclude, Prisma.OrderSelect> = {},
) {
  return closeOrder(db, events, id, 'cancel', loading);
}

export interface StatusTotal {
  status: PetStatus;
  entries: number;
  quantity: number;
}

/** Inventory entries and stock per status: the classic petstore's inventory map. */
export async function inventorySummary(db: PrismaClient): Promise<StatusTotal[]> {
  const groups = await db.inventoryItem.groupBy({ by: ['status'], _count: { _all: true }, _sum: { quantity: true } });
  const statuses: PetStatus[] = ['available', 'pending', 'sold'];
  return statuses.map((status) => {
    const group = groups.find((g) => g.status === status);
    return { status, entries: group?._count._all ?? 0, quantity: group?._sum.quantity ?? 0 };
  });
}
