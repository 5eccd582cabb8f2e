import { scopes } from '../auth/scopes.js';
import { builder } from '../builder.js';
import { globalId } from '../pothos-plugins/global-ids.js';
import { orderFilter } from '../domain/queries.js';
import { cancelOrder, completeOrder, type OrderInput, placeOrder } from '../domain/stock.js';
import { countOf, plannedList, plannedLookup, plannedWrite, type WriteContext } from './plans.js';
import { costs, PAGE, WRITE } from '../pothos-plugins/cost.js';
import { int64Id, pageSizes, sharedConnection } from './shared.js';
import { TOLD_BY_EVENTS } from '../domain/changes.js';

export const Order = builder.prismaNode('Order', {
  // Its global id (nodeId) is made of id (src/pothos-plugins/global-ids.ts), by its resolver and the plans alike.
  id: globalId('Order'),
  // node(id:) and nodes(ids:) answer null for an id with no row, as the spec asks.
  nullable: true,
  description: 'An order for a pet. The spec makes every field optional; here id and petId are always set.',
  // Select mode, as Pet: these columns always, relations only when asked.
  select: { id: true, petId: true, quantity: true, shipDate: true, complete: true },
  fields: (t) => ({
    id: t.field(int64Id('id', 'Unique order identifier (int64, as a string).')),
    petId: t.field(int64Id('petId', 'The id of the animal in this order.')),
    quantity: t.int({ nullable: true, resolve: (row) => row.quantity, description: 'Number of units ordered.' }),
    shipDate: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (row) => row.shipDate,
      description: 'Expected or actual ship date (ISO 8601, UTC).',
    }),
    complete: t.boolean({
      nullable: true,
      resolve: (row) => row.complete,
      description: 'Whether the order has been fulfilled.',
    }),
    pet: t.relation('pet', { description: 'The animal in this order.' }),
  }),
});

const OrderFilter = builder.inputType('OrderFilter', {
  description: 'Narrows a list of orders; all given conditions must hold.',
  fields: (t) => ({
    petId: t.int64Id({ required: false, description: 'Only orders for this pet.' }),
    complete: t.boolean({ required: false, description: 'Only complete (true) or only open (false) orders.' }),
  }),
});

/** Every list of orders: Query.orders and Pet.orders. */
export const OrderConnection = sharedConnection(Order, 'Order', 'orders');

/** Orders, filtered, by id. */
const orderList = plannedList('order', 'id', (args: { filter?: Parameters<typeof orderFilter>[0] | null }) => ({
  where: orderFilter(args.filter ?? {}),
  orderBy: { id: 'asc' },
}));

/** One order by id. */
const orderById = plannedLookup('order', (args: { id: bigint }) => ({ id: args.id }), { batched: false });

builder.queryFields((t) => ({
  orders: t.prismaConnection(
    {
      authScopes: { scope: scopes.readOrders },
      type: 'Order',
      cursor: 'id',
      description: 'Orders by id, 20 to a page unless asked (at most 100).',
      ...pageSizes,
      ...costs(PAGE),
      extensions: orderList.extensions,
      args: { filter: t.arg({ type: OrderFilter, required: false, description: 'Conditions the orders must meet.' }) },
      totalCount: (_parent, args, ctx) => countOf(ctx.prisma, 'order', orderList.read(args).where),
      resolve: (query, _parent, args, ctx) => ctx.prisma.order.findMany({ ...query, ...orderList.read(args) }),
    },
    OrderConnection,
  ),
  order: t.prismaField({
    authScopes: { scope: scopes.readOrders },
    type: 'Order',
    nullable: true,
    description: 'One order by its id, or null when there is none.',
    extensions: orderById.extensions,
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the order.' }) },
    resolve: (query, _parent, args, ctx) => ctx.prisma.order.findUnique({ ...query, where: orderById.where(args) }),
  }),
}));

const PlaceOrderInput = builder.inputType('PlaceOrderInput', {
  description: 'An order to place.',
  fields: (t) => ({
    petId: t.int64Id({ required: true, description: 'The id of the pet to order.' }),
    quantity: t.int({ required: true, description: 'Number of units: 1 to 1000, at most what is in stock.' }),
    shipDate: t.field({ type: 'DateTime', required: false, description: 'Expected ship date, if known: years 1 to 9999, UTC.' }),
  }),
});

/** Placing an order: one statement (place_order), planned when the answer reads only the order's own fields. */
const placing = plannedWrite(TOLD_BY_EVENTS, (args: { input: OrderInput }, ctx: WriteContext, query?: Parameters<typeof placeOrder>[3]) =>
  placeOrder(ctx.prisma, ctx.events, args.input, query),
);

/** Completing and cancelling: one statement each (close_order), planned as placing is. */
const completing = plannedWrite(TOLD_BY_EVENTS, (args: { id: bigint }, ctx: WriteContext, query?: Parameters<typeof completeOrder>[3]) =>
  completeOrder(ctx.prisma, ctx.events, args.id, query),
);
const cancelling = plannedWrite(TOLD_BY_EVENTS, (args: { id: bigint }, ctx: WriteContext, query?: Parameters<typeof cancelOrder>[3]) =>
  cancelOrder(ctx.prisma, ctx.events, args.id, query),
);

builder.mutationFields((t) => ({
  placeOrder: t.prismaField({
    authScopes: { scope: scopes.writeOrders },
    type: Order,
    description:
      'Takes the stock and records the order, in one transaction; INSUFFICIENT_STOCK when there is not enough.',
    extensions: placing.extensions,
    ...costs(WRITE),
    args: { input: t.arg({ type: PlaceOrderInput, required: true, description: 'The order.' }) },
    // What the operation selects is read in the order's transaction: the stock this order left.
    resolve: (query, _root, args, ctx) => placing.write(args, ctx, query),
  }),
  completeOrder: t.prismaField({
    authScopes: { scope: scopes.writeOrders },
    type: Order,
    description: 'Marks an open order complete; its ship date becomes now unless it had one.',
    extensions: completing.extensions,
    ...costs(WRITE),
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the order.' }) },
    // Its pet, when selected, is read in the order's transaction: the status this completion left.
    resolve: (query, _root, args, ctx) => completing.write(args, ctx, query),
  }),
  cancelOrder: t.prismaField({
    authScopes: { scope: scopes.writeOrders },
    type: Order,
    description:
      'Cancels an open order and returns its quantity to stock. Returns the order as it was; its pet as it is now.',
    extensions: cancelling.extensions,
    ...costs(WRITE),
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the order.' }) },
    // The order is deleted; its pet, when selected, is read by the pet's id in the same transaction.
    resolve: (query, _root, args, ctx) => cancelling.write(args, ctx, query),
  }),
}));
