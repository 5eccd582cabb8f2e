import { scopes } from '../auth/scopes.js';
import { builder } from '../builder.js';
import { globalId } from '../pothos-plugins/global-ids.js';
import { inventorySummary, type StatusTotal, updateInventory } from '../domain/stock.js';
import type { PetStatus as PetStatusValue } from '../generated/prisma/enums.js';
import { PetStatus } from './pet.js';
import { countOf, plannedList, plannedLookup, plannedWrite, type WriteContext } from './plans.js';
import { costs, PAGE, WRITE } from '../pothos-plugins/cost.js';
import { int64Id, pageSizes, sharedConnection, stability } from './shared.js';
import { TOLD_BY_EVENTS } from '../domain/changes.js';

export const InventoryItem = builder.prismaNode('InventoryItem', {
  // Its global id (nodeId) is made of petId (src/pothos-plugins/global-ids.ts), by its resolver and the plans alike.
  id: globalId('InventoryItem'),
  // node(id:) and nodes(ids:) answer null for an id with no row, as the spec asks.
  nullable: true,
  description: 'The stock of one pet.',
  // Select mode, as Pet: these columns always, relations only when asked.
  select: { petId: true, quantity: true, status: true },
  fields: (t) => ({
    petId: t.field(int64Id('petId', 'The id of the animal this entry tracks.')),
    quantity: t.int({ resolve: (row) => row.quantity, description: 'Current stock count.' }),
    status: t.field({
      type: PetStatus,
      resolve: (row) => row.status,
      description: 'AVAILABLE while in stock; at zero, PENDING while an order is open, else SOLD.',
    }),
    pet: t.relation('pet', { description: 'The animal this entry tracks.' }),
  }),
});

const InventoryStatusTotal = builder.objectRef<StatusTotal>('InventoryStatusTotal').implement({
  description: 'Inventory entries and their stock in one status.',
  fields: (t) => ({
    status: t.expose('status', { type: PetStatus, description: 'The status.' }),
    entries: t.exposeInt('entries', { description: 'How many inventory entries have this status.' }),
    quantity: t.exposeInt('quantity', { description: 'Their stock, added up.' }),
  }),
});

const InventoryFilter = builder.inputType('InventoryFilter', {
  description: 'Narrows a list of inventory entries.',
  fields: (t) => ({
    status: t.field({ type: PetStatus, required: false, description: 'Only entries with this status.' }),
  }),
});

const inventoryWhere = (filter?: { status?: PetStatusValue | null } | null) => (filter?.status ? { status: filter.status } : {});

/** The list of inventory entries. */
const InventoryItemConnection = sharedConnection(InventoryItem, 'InventoryItem', 'inventory entries');

/** Inventory entries, filtered by status, by pet id. */
const inventoryList = plannedList('inventoryItem', 'petId', (args: { filter?: { status?: PetStatusValue | null } | null }) => ({
  where: inventoryWhere(args.filter),
  orderBy: { petId: 'asc' },
}));

/** One pet's entry. */
const inventoryByPet = plannedLookup('inventoryItem', (args: { petId: bigint }) => ({ petId: args.petId }), { batched: false });

builder.queryFields((t) => ({
  inventory: t.prismaConnection(
    {
      type: 'InventoryItem',
      cursor: 'petId',
      description: 'Inventory entries by pet id, 20 to a page unless asked (at most 100).',
      ...pageSizes,
      ...costs(PAGE),
      extensions: inventoryList.extensions,
      args: {
        filter: t.arg({ type: InventoryFilter, required: false, description: 'Conditions the entries must meet.' }),
      },
      totalCount: (_parent, args, ctx) => countOf(ctx.prisma, 'inventoryItem', inventoryList.read(args).where),
      resolve: (query, _parent, args, ctx) => ctx.prisma.inventoryItem.findMany({ ...query, ...inventoryList.read(args) }),
    },
    InventoryItemConnection,
  ),
  inventoryItem: t.prismaField({
    type: 'InventoryItem',
    nullable: true,
    description: "One pet's inventory entry, or null when it has none.",
    extensions: inventoryByPet.extensions,
    args: { petId: t.arg.int64Id({ required: true, description: 'The id of the pet.' }) },
    resolve: (query, _parent, args, ctx) => ctx.prisma.inventoryItem.findUnique({ ...query, where: inventoryByPet.where(args) }),
  }),
  inventorySummary: t.field({
    type: [InventoryStatusTotal],
    // One aggregate over every entry: a count's weight, and one row per status.
    ...costs({ weight: 5, list: { assumedSize: 3 } }, stability('BETA', 'Inventory entries and stock per status (the classic petstore inventory map).')),
    resolve: (_root, _args, ctx) => inventorySummary(ctx.prisma),
  }),
}));

const InventoryUpdate = builder.inputType('InventoryUpdate', {
  description: "A pet's new stock count.",
  fields: (t) => ({
    quantity: t.int({ required: true, description: 'The new stock count: 0 to 1,000,000.' }),
  }),
});

/** Setting the stock: one statement (set_stock), planned when the answer reads only the entry's own fields. */
const setting = plannedWrite(
  TOLD_BY_EVENTS,
  (args: { petId: bigint; input: { quantity: number } }, ctx: WriteContext, query?: Parameters<typeof updateInventory>[4]) =>
    updateInventory(ctx.prisma, ctx.events, args.petId, args.input, query),
);

builder.mutationFields((t) => ({
  updateInventory: t.prismaField({
    authScopes: { scope: scopes.writeInventory },
    type: InventoryItem,
    ...costs(WRITE, stability('BETA', "Sets a pet's stock count, creating its inventory entry if it has none.")),
    extensions: setting.extensions,
    args: {
      petId: t.arg.int64Id({ required: true, description: 'The id of the pet.' }),
      input: t.arg({ type: InventoryUpdate, required: true, description: 'The new stock count.' }),
    },
    // What the operation selects of the pet is read in the write's transaction: the status this count gave it.
    resolve: (query, _root, args, ctx) => setting.write(args, ctx, query),
  }),
}));
