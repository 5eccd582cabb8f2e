import { scopes } from '../auth/scopes.js';
import { builder } from '../builder.js';
import type { InventoryChanged, OrderChanged, PetStatusChanged } from '../domain/events.js';
import { PetStatus } from './pet.js';
import { stability } from './shared.js';

/** Subscriptions: what changed, as it was when the write committed. */

const InventoryChange = builder.objectRef<InventoryChanged>('InventoryChange').implement({
  description: "A pet's stock after a write changed it.",
  fields: (t) => ({
    petId: t.exposeID('petId', { description: 'The id of the pet whose stock changed.' }),
    quantity: t.exposeInt('quantity', { description: 'The stock count after the change.' }),
    status: t.expose('status', { type: PetStatus, description: "The entry's status after the change." }),
    pet: t.prismaField({
      type: 'Pet',
      nullable: true,
      description: 'The pet as it is now (null once deleted).',
      resolve: (query, change, _args, ctx) =>
        ctx.prisma.pet.findUnique({ ...query, where: { id: BigInt(change.petId) } }),
    }),
  }),
});

const OrderChangeKind = builder.enumType('OrderChangeKind', {
  description: 'What happened to an order.',
  values: {
    PLACED: { value: 'placed', description: 'The order was placed and its stock taken.' },
    COMPLETED: { value: 'completed', description: 'The order was fulfilled.' },
    CANCELLED: { value: 'cancelled', description: 'The order was cancelled and its stock returned.' },
  } as const,
});

const OrderChange = builder.objectRef<OrderChanged>('OrderChange').implement({
  description: 'An order placed, completed or cancelled.',
  fields: (t) => ({
    change: t.expose('change', { type: OrderChangeKind, description: 'What happened.' }),
    orderId: t.id({ description: 'The id of the order.', resolve: (c) => c.order.id }),
    petId: t.id({ description: 'The id of the pet ordered.', resolve: (c) => c.order.petId }),
    quantity: t.int({ description: 'Number of units ordered.', resolve: (c) => c.order.quantity }),
    shipDate: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Expected or actual ship date (ISO 8601, UTC).',
      resolve: (c) => (c.order.shipDate ? new Date(c.order.shipDate) : null),
    }),
    complete: t.boolean({ description: 'Whether the order has been fulfilled.', resolve: (c) => c.order.complete }),
  }),
});

const PetStatusChange = builder.objectRef<PetStatusChanged>('PetStatusChange').implement({
  description: "A pet's status after a write changed it.",
  fields: (t) => ({
    petId: t.id({ description: 'The id of the pet.', resolve: (c) => c.pet.id }),
    name: t.string({ description: "The pet's name.", resolve: (c) => c.pet.name }),
    categoryId: t.id({ description: "The pet's category.", resolve: (c) => c.pet.categoryId }),
    status: t.field({ type: PetStatus, description: 'The new status.', resolve: (c) => c.pet.status }),
    previousStatus: t.expose('previousStatus', { type: PetStatus, description: 'The status before the change.' }),
  }),
});

builder.subscriptionType({ description: 'Live changes, delivered over Server-Sent Events or WebSocket.' });

builder.subscriptionFields((t) => ({
  inventoryChanged: t.field({
    type: InventoryChange,
    ...stability('EXPERIMENTAL', "A pet's stock each time a write changes it: all pets, or the one given."),
    args: { petId: t.arg.int64Id({ required: false, description: 'Only this pet.' }) },
    subscribe: (_root, { petId }, ctx) =>
      petId
        ? ctx.pubsub.subscribe('inventoryChanged:pet', petId.toString())
        : ctx.pubsub.subscribe('inventoryChanged'),
    resolve: (change) => change,
  }),
  orderChanged: t.field({
    type: OrderChange,
    authScopes: { scope: scopes.readOrders },
    ...stability('EXPERIMENTAL', 'Orders as they are placed, completed or cancelled. Needs orders:read.'),
    subscribe: (_root, _args, ctx) => ctx.pubsub.subscribe('orderChanged'),
    resolve: (change) => change,
  }),
  petStatusChanged: t.field({
    type: PetStatusChange,
    ...stability('EXPERIMENTAL', "Pets whose status changes (their stock ran out, came back, or was set)."),
    subscribe: (_root, _args, ctx) => ctx.pubsub.subscribe('petStatusChanged'),
    resolve: (change) => change,
  }),
}));
