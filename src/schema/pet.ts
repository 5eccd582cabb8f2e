import { metricsClient, scopes } from '../auth/scopes.js';
import { builder } from '../builder.js';
import { globalId } from '../pothos-plugins/global-ids.js';
import { createPet, deletePet, type PetInput, updatePet } from '../domain/catalog.js';
import { containsText } from '../domain/queries.js';
import type { Prisma } from '../generated/prisma/client.js';
import { DEFAULT_LEGACY_SUNSET_DATE, LEGACY_FIELD, legacyLookupDeprecation } from '../legacy.js';
import { OrderConnection } from './order.js';
import { TOLD_BY_EVENTS } from '../domain/changes.js';
import { countOf, plannedList, plannedLookup, plannedWrite, type WriteContext } from './plans.js';
import { costs, PAGE, WRITE } from '../pothos-plugins/cost.js';
import { int64Id, pagedById, pageSizes, sharedConnection } from './shared.js';

export const PetStatus = builder.enumType('PetStatus', {
  description: 'Status of a pet and of an inventory entry.',
  values: {
    AVAILABLE: { value: 'available', description: 'In stock and can be ordered.' },
    PENDING: { value: 'pending', description: 'Out of stock while an order for it is still open.' },
    SOLD: { value: 'sold', description: 'Out of stock with no open order.' },
  } as const,
});

export const Pet = builder.prismaNode('Pet', {
  // Its global id (nodeId) is made of id (src/pothos-plugins/global-ids.ts), by its resolver and the plans alike.
  id: globalId('Pet'),
  // node(id:) and nodes(ids:) answer null for an id with no row, as the spec asks.
  nullable: true,
  description: 'An animal in the store. Every pet belongs to a category.',
  // Select mode: every read takes these columns (never the bookkeeping timestamps), and relations
  // only when asked. Scalar fields resolve from this row without a per-field selection of their own:
  // not t.expose*, which in select mode makes a row a write returns be read again (createPet: 3 -> 4
  // statements, measured).
  select: { id: true, name: true, categoryId: true, status: true },
  fields: (t) => ({
    id: t.field(int64Id('id', 'Unique identifier (int64, as a string), assigned on creation.')),
    name: t.string({ resolve: (row) => row.name, description: "The animal's name." }),
    categoryId: t.field(int64Id('categoryId', 'The id of the category the animal belongs to.')),
    status: t.field({
      type: PetStatus,
      nullable: true,
      resolve: (row) => row.status,
      description:
        "Status of the pet: its inventory entry's status when it has one, otherwise the status it was given.",
    }),
    category: t.relation('category', { description: 'The category the animal belongs to.' }),
    inventory: t.relation('inventory', { nullable: true, description: "The pet's stock entry, if it has one." }),
    orders: t.relatedConnection(
      'orders',
      {
        authScopes: { scope: scopes.readOrders },
        description: 'Orders for this pet, oldest first.',
        ...pagedById,
        ...costs(PAGE),
      },
      OrderConnection,
    ),
  }),
});

/** Every list of pets: Query.pets and Category.pets. */
export const PetConnection = sharedConnection(Pet, 'Pet', 'pets');

const PetFilter = builder.inputType('PetFilter', {
  description: 'Narrows a list of pets; all given conditions must hold.',
  fields: (t) => ({
    status: t.field({ type: PetStatus, required: false, description: 'Only pets with this status.' }),
    categoryId: t.int64Id({ required: false, description: 'Only pets of this category.' }),
    nameContains: t.string({ required: false, description: 'Only pets whose name contains this text, ignoring case.' }),
  }),
});

const PetOrderField = builder.enumType('PetOrderField', {
  description: 'What a list of pets can be ordered by.',
  values: {
    ID: { value: 'id', description: 'The id, which is the order of creation.' },
    NAME: { value: 'name', description: 'The name, alphabetically.' },
  } as const,
});

export const OrderDirection = builder.enumType('OrderDirection', {
  description: 'Ascending or descending.',
  values: {
    ASC: { value: 'asc', description: 'Smallest first.' },
    DESC: { value: 'desc', description: 'Largest first.' },
  } as const,
});

const PetOrder = builder.inputType('PetOrder', {
  description: 'The order of a list of pets. Ties are broken by id.',
  fields: (t) => ({
    field: t.field({ type: PetOrderField, required: true, description: 'What to order by.' }),
    direction: t.field({ type: OrderDirection, defaultValue: 'asc', description: 'Which way.' }),
  }),
});

type PetFilterArgs = { status?: 'available' | 'pending' | 'sold' | null; categoryId?: bigint | null; nameContains?: string | null } | null;

/** Pets: filtered, by id or by name (ties broken by id). */
const petList = plannedList('pet', 'id', (args: { filter?: PetFilterArgs; orderBy?: { field: 'id' | 'name'; direction?: 'asc' | 'desc' | null } | null }) => {
  const direction = args.orderBy?.direction ?? 'asc';
  const orderBy: Prisma.PetOrderByWithRelationInput[] =
    args.orderBy?.field === 'name' ? [{ name: direction }, { id: direction }] : [{ id: direction }];
  return { where: petWhere(args.filter), orderBy };
});

/** One pet by id, read with the other requests' lookups. */
const petById = plannedLookup('pet', (args: { id: bigint }) => ({ id: args.id }), { batched: true });

builder.queryFields((t) => ({
  pets: t.prismaConnection(
    {
      type: 'Pet',
      cursor: 'id',
      description: 'Pets, 20 to a page unless asked (at most 100), by id unless ordered otherwise.',
      ...pageSizes,
      ...costs(PAGE),
      extensions: petList.extensions,
      args: {
        filter: t.arg({ type: PetFilter, required: false, description: 'Conditions the pets must meet.' }),
        orderBy: t.arg({ type: PetOrder, required: false, description: 'The order of the list.' }),
      },
      totalCount: (_parent, args, ctx) => countOf(ctx.prisma, 'pet', petList.read(args).where),
      resolve: (query, _parent, args, ctx) => ctx.prisma.pet.findMany({ ...query, ...petList.read(args) }),
    },
    PetConnection,
  ),
  pet: t.prismaField({
    type: 'Pet',
    nullable: true,
    description: 'One pet by its id, or null when there is none.',
    extensions: petById.extensions,
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the pet.' }) },
    resolve: (query, _parent, args, ctx) => ctx.lookups(() => ctx.prisma.pet.findUnique({ ...query, where: petById.where(args) })),
  }),
  getPetById: t.prismaField({
    type: 'Pet',
    nullable: true,
    description: 'One pet by its id: the legacy lookup, kept with its original shape.',
    deprecationReason: legacyLookupDeprecation(DEFAULT_LEGACY_SUNSET_DATE),
    // Kept for the callers of this service's original API, not offered to a supergraph's new ones.
    inaccessible: true,
    args: { petId: t.arg.int64Id({ required: true, description: 'The id of the pet.' }) },
    resolve: (query, _parent, args, ctx) => {
      ctx.legacy.refuseWhenRetired(LEGACY_FIELD, { client: metricsClient(ctx.principal), requestId: ctx.requestId });
      return ctx.lookups(() => ctx.prisma.pet.findUnique({ ...query, where: { id: args.petId } }));
    },
  }),
}));

function petWhere(filter?: PetFilterArgs): Prisma.PetWhereInput {
  return {
    ...(filter?.status ? { status: filter.status } : {}),
    ...(filter?.categoryId == null ? {} : { categoryId: filter.categoryId }),
    ...(filter?.nameContains ? { name: containsText(filter.nameContains) } : {}),
  };
}

const NewPet = builder.inputType('NewPet', {
  description: 'The input form of a pet.',
  fields: (t) => ({
    name: t.string({ required: true, description: "The animal's name: 1 to 100 characters, trimmed." }),
    categoryId: t.int64Id({ required: true, description: 'The id of an existing category.' }),
    status: t.field({
      type: PetStatus,
      required: false,
      description: 'Status of the pet (available when not given). Once it has stock, its stock decides.',
    }),
  }),
});

const PetChanges = builder.inputType('PetChanges', {
  description: 'Changes to a pet; fields left out stay as they are.',
  fields: (t) => ({
    name: t.string({ required: false, description: "The animal's new name: 1 to 100 characters, trimmed." }),
    categoryId: t.int64Id({ required: false, description: 'The id of the category to move the pet to.' }),
    status: t.field({
      type: PetStatus,
      required: false,
      description: 'A new status; refused for a pet with an inventory entry, whose status follows its stock.',
    }),
  }),
});

/** Changing a pet: one statement (update_pet), planned when the answer reads only the pet's own fields. */
const updating = plannedWrite(
  TOLD_BY_EVENTS,
  (args: { id: bigint; input: PetInput }, ctx: WriteContext) =>
    updatePet(ctx.prisma, ctx.events, args.id, {
      name: args.input.name,
      status: args.input.status,
      categoryId: args.input.categoryId ?? undefined,
    }),
);

/**
 * Removing a pet with its stock entry and finished orders: one statement (delete_pet), planned when
 * the answer reads only the pet's own fields; the relations it selects are read before the row goes.
 */
const deleting = plannedWrite(
  ({ id }) => [
    { removed: 'Pet', id: String(id) },
    { removed: 'InventoryItem', id: String(id) },
    { removed: 'Order', ofPet: String(id) },
  ],
  (args: { id: bigint }, ctx: WriteContext, query?: Parameters<typeof deletePet>[2]) => deletePet(ctx.prisma, args.id, query),
);

/** Adding a pet: one INSERT, planned when the answer reads only the pet's own fields. */
const creating = plannedWrite(
  () => [{ added: 'Pet' }],
  (args: { input: PetInput & { name: string; categoryId: bigint } }, ctx: WriteContext) => createPet(ctx.prisma, args.input),
);

builder.mutationFields((t) => ({
  createPet: t.field({
    authScopes: { scope: scopes.writeCatalog },
    type: Pet,
    description: 'Adds a pet to an existing category.',
    ...costs(WRITE),
    extensions: creating.extensions,
    args: { input: t.arg({ type: NewPet, required: true, description: 'The new pet.' }) },
    resolve: (_root, args, ctx) => creating.write(args, ctx),
  }),
  updatePet: t.field({
    authScopes: { scope: scopes.writeCatalog },
    type: Pet,
    description: "Changes a pet's name, category or (when it has no stock entry) status.",
    ...costs(WRITE),
    extensions: updating.extensions,
    args: {
      id: t.arg.int64Id({ required: true, description: 'The id of the pet.' }),
      input: t.arg({ type: PetChanges, required: true, description: 'The changes.' }),
    },
    resolve: (_root, args, ctx) => updating.write(args, ctx),
  }),
  deletePet: t.prismaField({
    authScopes: { scope: scopes.writeCatalog },
    type: Pet,
    description:
      'Removes a pet with its stock entry and finished orders; refused while it has an open order. ' +
      'Returns the pet as it was.',
    ...costs(WRITE),
    extensions: deleting.extensions,
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the pet.' }) },
    // The relations the operation selects are read before the row goes.
    resolve: (query, _root, args, ctx) => deleting.write(args, ctx, query),
  }),
}));
