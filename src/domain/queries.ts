import { z } from 'zod';
import type { PrismaClient } from '../database/client.js';
import { findMany } from '../database/find-many.js';
import { notFound } from '../errors.js';
import type { Lookups } from './lookups.js';
import type { Order, Pet, Prisma } from '../generated/prisma/client.js';
import { validate, wholeNumberBetween } from './validation.js';

/** Reads that answer with an error rather than an empty result, shared by the HTTP layers. */

export async function findPetOrThrow(db: PrismaClient, id: bigint, lookups: Lookups): Promise<Pet> {
  const pet = await lookups(() => db.pet.findUnique({ where: { id } }));
  if (!pet) throw notFound(`Pet ${id} does not exist.`);
  return pet;
}

/** Offset paging of the legacy order list: 50 to a page unless asked, 1 to 100. */
export const orderListPaging = { defaultLimit: 50, maxLimit: 100, maxOffset: 2_147_483_647 } as const;

const orderListQuery = z.object({
  complete: z.boolean().optional(),
  petId: z.bigint().optional(),
  limit: wholeNumberBetween('limit', 1, orderListPaging.maxLimit).default(orderListPaging.defaultLimit),
  offset: wholeNumberBetween('offset', 0, orderListPaging.maxOffset).default(0),
});

export interface OrderListQuery {
  complete?: boolean | undefined;
  petId?: bigint | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

export interface OrderPage {
  orders: Order[];
  limit: number;
  offset: number;
  /** Whether orders remain after this page. */
  hasMore: boolean;
}

/** The one filter of order lists (GraphQL `orders`, REST `GET /store/orders`): by pet and completeness. */
export function orderFilter(filter: { petId?: bigint | null; complete?: boolean | null }): Prisma.OrderWhereInput {
  return {
    ...(filter.petId == null ? {} : { petId: filter.petId }),
    ...(typeof filter.complete === 'boolean' ? { complete: filter.complete } : {}),
  };
}

/** Every column of an order, as a findMany without a select reads them. */
const orderColumns = { id: true, petId: true, quantity: true, shipDate: true, complete: true, createdAt: true } satisfies Record<keyof Order, true>;

/**
 * Orders by id (a stable order for offset paging), filtered by pet and completeness: read by the
 * gateway's own statement, as GraphQL's planned order lists are (src/database/find-many.ts).
 */
export async function listOrders(db: PrismaClient, query: OrderListQuery): Promise<OrderPage> {
  const { complete, petId, limit, offset } = validate(orderListQuery, query);
  // One row past the page tells whether another page exists, without a count.
  const args = { select: orderColumns, where: orderFilter({ petId, complete }) as Record<string, unknown>, orderBy: { id: 'asc' }, skip: offset, take: limit + 1 };
  const rows = (await findMany(db, 'order', args, () => db.order.findMany(args as Parameters<typeof db.order.findMany>[0]))) as Order[];
  return { orders: rows.slice(0, limit), limit, offset, hasMore: rows.length > limit };
}

/**
 * A case-insensitive "contains" filter that matches the text literally:
 * Prisma passes the text into LIKE as it is, where % and _ would be wildcards.
 */
export function containsText(text: string) {
  return { contains: text.replace(/[\\%_]/g, (character) => `\\${character}`), mode: 'insensitive' as const };
}
