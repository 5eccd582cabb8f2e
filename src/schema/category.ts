import { scopes } from '../auth/scopes.js';
import { builder } from '../builder.js';
import { globalId } from '../pothos-plugins/global-ids.js';
import { type CategoryInput, createCategory, deleteCategory, updateCategory } from '../domain/catalog.js';
import { PetConnection } from './pet.js';
import { countOf, plannedList, plannedLookup, plannedWrite, type WriteContext } from './plans.js';
import { costs, PAGE, WRITE } from '../pothos-plugins/cost.js';
import { int64Id, pagedById, pageSizes, sharedConnection } from './shared.js';

export const Category = builder.prismaNode('Category', {
  // Its global id (nodeId) is made of id (src/pothos-plugins/global-ids.ts), by its resolver and the plans alike.
  id: globalId('Category'),
  // node(id:) and nodes(ids:) answer null for an id with no row, as the spec asks.
  nullable: true,
  description: 'A kind of animal, such as dogs, cats or rabbits.',
  // Select mode, as Pet: these columns always, relations only when asked.
  select: { id: true, name: true, description: true },
  fields: (t) => ({
    id: t.field(int64Id('id', 'Unique identifier (int64, as a string), assigned on creation.')),
    name: t.string({ resolve: (row) => row.name, description: 'The category name, unique in the store.' }),
    description: t.string({
      nullable: true,
      resolve: (row) => row.description,
      description: 'A short description of the category.',
    }),
    pets: t.relatedConnection(
      'pets',
      {
        description: 'The pets of this category, by id.',
        ...pagedById,
        ...costs(PAGE),
      },
      PetConnection,
    ),
  }),
});

/** The list of categories. */
const CategoryConnection = sharedConnection(Category, 'Category', 'categories');

/** Categories, by id. */
const categoryList = plannedList('category', 'id', () => ({ orderBy: { id: 'asc' } }));

/** One category by id, read with the other requests' lookups. */
const categoryById = plannedLookup('category', (args: { id: bigint }) => ({ id: args.id }), { batched: true });

builder.queryFields((t) => ({
  categories: t.prismaConnection(
    {
      type: 'Category',
      cursor: 'id',
      description: 'Categories by id, 20 to a page unless asked (at most 100).',
      ...pageSizes,
      ...costs(PAGE),
      extensions: categoryList.extensions,
      totalCount: (_parent, args, ctx) => countOf(ctx.prisma, 'category', categoryList.read(args).where),
      resolve: (query, _parent, args, ctx) => ctx.prisma.category.findMany({ ...query, ...categoryList.read(args) }),
    },
    CategoryConnection,
  ),
  category: t.prismaField({
    type: 'Category',
    nullable: true,
    description: 'One category by its id, or null when there is none.',
    extensions: categoryById.extensions,
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the category.' }) },
    resolve: (query, _parent, args, ctx) =>
      ctx.lookups(() => ctx.prisma.category.findUnique({ ...query, where: categoryById.where(args) })),
  }),
}));

const NewCategory = builder.inputType('NewCategory', {
  description: 'The input form of a category.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'The category name: 1 to 100 characters, trimmed, unique.' }),
    description: t.string({ required: false, description: 'A short description, at most 1000 characters.' }),
  }),
});

const CategoryChanges = builder.inputType('CategoryChanges', {
  description: 'Changes to a category; fields left out stay as they are, a null description clears it.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'The new name: 1 to 100 characters, trimmed, unique.' }),
    description: t.string({ required: false, description: 'The new description, at most 1000 characters.' }),
  }),
});

/** Adding a category: one INSERT, planned when the answer reads only the category's own fields. */
const creating = plannedWrite(
  () => [{ added: 'Category' }],
  (args: { input: CategoryInput & { name: string } }, ctx: WriteContext) => createCategory(ctx.prisma, args.input),
);

/** Changing a category: one UPDATE, planned when the answer reads only the category's own fields. */
const updating = plannedWrite(
  ({ id }) => [{ changed: 'Category', id: String(id) }],
  (args: { id: bigint; input: CategoryInput }, ctx: WriteContext) => updateCategory(ctx.prisma, args.id, args.input),
);

/**
 * Removing a category: one statement (delete_category), planned when the answer reads only the
 * category's own fields; the relations it selects are read before the row goes.
 */
const deleting = plannedWrite(
  ({ id }) => [{ removed: 'Category', id: String(id) }],
  (args: { id: bigint }, ctx: WriteContext, query?: Parameters<typeof deleteCategory>[2]) => deleteCategory(ctx.prisma, args.id, query),
);

builder.mutationFields((t) => ({
  createCategory: t.field({
    authScopes: { scope: scopes.writeCatalog },
    type: Category,
    description: 'Adds a category. Its name must not be taken.',
    ...costs(WRITE),
    extensions: creating.extensions,
    args: { input: t.arg({ type: NewCategory, required: true, description: 'The new category.' }) },
    resolve: (_root, args, ctx) => creating.write(args, ctx),
  }),
  updateCategory: t.field({
    authScopes: { scope: scopes.writeCatalog },
    type: Category,
    description: "Changes a category's name or description.",
    ...costs(WRITE),
    extensions: updating.extensions,
    args: {
      id: t.arg.int64Id({ required: true, description: 'The id of the category.' }),
      input: t.arg({ type: CategoryChanges, required: true, description: 'The changes.' }),
    },
    resolve: (_root, args, ctx) => updating.write(args, ctx),
  }),
  deleteCategory: t.prismaField({
    authScopes: { scope: scopes.writeCatalog },
    type: Category,
    description: 'Removes a category; refused while any pet belongs to it. Returns the category as it was.',
    ...costs(WRITE),
    extensions: deleting.extensions,
    args: { id: t.arg.int64Id({ required: true, description: 'The id of the category.' }) },
    // The relations the operation selects are read before the row goes.
    resolve: (query, _root, args, ctx) => deleting.write(args, ctx, query),
  }),
}));
