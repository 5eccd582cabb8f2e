import { printSubgraphSchema } from '@apollo/subgraph';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { queryFromInfo } from '@pothos/plugin-prisma';
import DataLoader from 'dataloader';
import {
  type ConstDirectiveNode,
  GraphQLEnumType,
  type GraphQLFieldResolver,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLUnionType,
  isObjectType,
} from 'graphql';
import { requireScope, scopes } from '../auth/scopes.js';
import { builder, type GraphQLContext } from '../builder.js';
import { parseId } from '../domain/ids.js';
import { validationFailed } from '../errors.js';
import { Category } from './category.js';
import { InventoryItem } from './inventory.js';
import { Order } from './order.js';
import { Pet } from './pet.js';

/*
 * The schema as an Apollo Federation v2 subgraph (FEDERATION=true): what a
 * router (Hive Gateway, Apollo Router, Cosmo) needs to compose this service
 * into a supergraph and to load its entities for other services' fields.
 *
 * The entities are the rows other services point at: a pet (reviews, shipping
 * and accounts extend it), its category, an order, a pet's inventory entry.
 * Each is keyed by what identifies its row: `id` for the first three; an
 * inventory entry has no id of its own (one entry per pet, its primary key is
 * `pet_id`), so it is keyed by `petId`. Giving it an `id` only to match the
 * others would add a field that says nothing new and a second name for the same key.
 *
 * `_entities` loads each type's representations of a request with one
 * statement (`WHERE id IN (...)`), selecting what the router's query asks of
 * that type, relations included (the Prisma plugin's planned selection, as
 * `pet(id:)` would have it); an id with no row is `null`. The scope rules are
 * the fields': an Order needs `orders:read`, a pet's `orders` too. A
 * representation that cannot name one of our rows (an unknown `__typename`, a
 * missing or malformed key) is that item's VALIDATION_FAILED, not the whole
 * list's.
 */

/** The federation directives the plugin may put on types and fields; none belongs to the standalone schema. */
const FEDERATION_DIRECTIVES = new Set([
  'key',
  'shareable',
  'inaccessible',
  'tag',
  'override',
  'external',
  'requires',
  'provides',
  'interfaceObject',
  'composeDirective',
  'link',
]);

/** Where each entity's rows are read, by the key its representations carry. */
interface EntitySource<Row> {
  /** The key field of the GraphQL type (and of its representations). */
  key: 'id' | 'petId';
  /** Reads the rows with these keys, with the selection the operation asks for (a Prisma `select` or `include`). */
  read: (ctx: GraphQLContext, query: object, keys: bigint[]) => Promise<Row[]>;
  /** The scope reading this type needs, as its root fields need it. */
  scope?: (typeof scopes)[keyof typeof scopes];
}

type Keyed = Record<string, unknown>;

/**
 * One loader per request, `_entities` field (an alias has its own selection) and type: every
 * representation of that type in the field is read by one statement, whatever their number.
 */
const loaders = new WeakMap<object, Map<string, DataLoader<bigint, unknown>>>();

function loaderFor<Row extends Keyed>(
  source: EntitySource<Row>,
  typeName: string,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): DataLoader<bigint, Row | null> {
  let byField = loaders.get(ctx);
  if (!byField) {
    byField = new Map();
    loaders.set(ctx, byField);
  }
  const name = `${typeName}@${info.path.key}`;
  let loader = byField.get(name) as DataLoader<bigint, Row | null> | undefined;
  if (!loader) {
    loader = new DataLoader<bigint, Row | null>(async (keys) => {
      // Planned once for the whole batch: what the operation selects on this type under `_entities`,
      // recorded for the fields beneath so that its relations are read by this statement too.
      const query = queryFromInfo({ context: ctx, info, typeName });
      const rows = await source.read(ctx, query, [...keys]);
      const byKey = new Map(rows.map((row) => [String(row[source.key]), row]));
      return keys.map((key) => byKey.get(String(key)) ?? null);
    });
    byField.set(name, loader as DataLoader<bigint, unknown>);
  }
  return loader;
}

function entity<Row extends Keyed>(typeName: string, source: EntitySource<Row>) {
  return async (representation: Keyed, ctx: GraphQLContext, info: GraphQLResolveInfo): Promise<Row | null> => {
    if (source.scope) requireScope(ctx.principal, source.scope);
    const key = representation[source.key];
    if (typeof key !== 'string' && typeof key !== 'number') {
      throw validationFailed('representations', `A ${typeName} representation needs its key ${source.key} (an int64 id as a string).`);
    }
    return loaderFor(source, typeName, ctx, info).load(parseId(key, source.key));
  };
}

// The key selections name our `ID` fields; a router sends their values as the strings we answer with.
builder.asEntity(Pet, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: entity('Pet', {
    key: 'id',
    read: (ctx, query, ids) => ctx.prisma.pet.findMany({ ...query, where: { id: { in: ids } } }),
  }),
});

builder.asEntity(Category, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: entity('Category', {
    key: 'id',
    read: (ctx, query, ids) => ctx.prisma.category.findMany({ ...query, where: { id: { in: ids } } }),
  }),
});

builder.asEntity(Order, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: entity('Order', {
    key: 'id',
    scope: scopes.readOrders,
    read: (ctx, query, ids) => ctx.prisma.order.findMany({ ...query, where: { id: { in: ids } } }),
  }),
});

builder.asEntity(InventoryItem, {
  key: builder.selection<{ petId: string }>('petId'),
  resolveReference: entity('InventoryItem', {
    key: 'petId',
    read: (ctx, query, petIds) => ctx.prisma.inventoryItem.findMany({ ...query, where: { petId: { in: petIds } } }),
  }),
});

type ReferenceResolver = (representation: Keyed, ctx: GraphQLContext, info: GraphQLResolveInfo) => Promise<unknown>;

/**
 * `_entities` as this gateway answers it: each representation on its own, so that one that
 * cannot be loaded (no such type, a bad key, a missing scope) is an error at its own index while
 * the others load. @apollo/subgraph's resolver throws for the whole list on an unknown type, and
 * its error would reach the client masked as INTERNAL.
 *
 * A failed item resolves to its Error rather than rejecting: graphql-js answers an Error item with
 * null and the error at its index, in the list's order, which the router reads entities by.
 */
const resolveEntities: GraphQLFieldResolver<unknown, GraphQLContext, { representations: unknown[] }> = (
  _root,
  { representations },
  ctx,
  info,
) =>
  representations.map((representation) => {
    const typename = (representation as Keyed | null)?.__typename;
    const type = typeof typename === 'string' ? info.schema.getType(typename) : undefined;
    const resolveReference = isObjectType(type)
      ? (type.extensions as { apollo?: { subgraph?: { resolveReference?: ReferenceResolver } } }).apollo?.subgraph?.resolveReference
      : undefined;
    if (!type || !resolveReference) {
      const named = typeof typename === 'string' ? `"${typename.slice(0, 60)}"` : 'no __typename';
      return validationFailed('representations', `A representation names ${named}, which is not an entity of this subgraph.`);
    }
    // Called now, in this turn, so that every representation of a type joins its loader's one batch.
    return resolveReference(representation as Keyed, ctx, info).then(
      (found) => {
        if (found !== null && typeof found === 'object') Object.defineProperty(found, '__typename', { value: type.name });
        return found;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
  });

/**
 * The subgraph schema of `options` (those of the standalone schema): the builder's own, with
 * `_entities`, `_service`, the entities' `@key`s, the other federation directives on their
 * fields, and the `@link` that imports them; `_entities` resolved as above, `_service { sdl }`
 * printing the schema `finish` makes of it (the served one: its version in its description).
 */
export function toSubgraphSchema(
  options: Parameters<typeof builder.toSubGraphSchema>[0],
  finish: (schema: GraphQLSchema) => GraphQLSchema,
): GraphQLSchema {
  let sdl = '';
  const subgraph = finish(
    mapSchema(builder.toSubGraphSchema(options), {
      [MapperKind.QUERY_ROOT_FIELD]: (field, name) => {
        if (name === '_entities') return { ...field, resolve: resolveEntities as GraphQLFieldResolver<unknown, unknown> };
        if (name === '_service') return { ...field, resolve: () => ({ sdl }) };
        return field;
      },
    }),
  );
  sdl = printSubgraphSchema(subgraph);
  return subgraph;
}

/**
 * `schema` without the federation directives the plugin puts on every build: the standalone
 * gateway's schema, as published in contract/, has no `@key` or `@tag` (nor their definitions).
 */
export function withoutFederationDirectives(schema: GraphQLSchema): GraphQLSchema {
  const strip = <Config extends { extensions?: unknown; astNode?: unknown }>(config: Config): Config => {
    const directives = (config.extensions as { directives?: Record<string, unknown> } | null | undefined)?.directives;
    const astNode = config.astNode as { directives?: readonly ConstDirectiveNode[] } | null | undefined;
    return {
      ...config,
      ...(directives
        ? {
            extensions: {
              ...(config.extensions as object),
              directives: Object.fromEntries(Object.entries(directives).filter(([name]) => !FEDERATION_DIRECTIVES.has(name))),
            },
          }
        : {}),
      ...(astNode?.directives
        ? { astNode: { ...astNode, directives: astNode.directives.filter((node) => !FEDERATION_DIRECTIVES.has(node.name.value)) } }
        : {}),
    };
  };
  // Every kind of type a federation directive may sit on (the specified scalars carry none).
  return mapSchema(schema, {
    [MapperKind.OBJECT_TYPE]: (type) => new GraphQLObjectType(strip(type.toConfig())),
    [MapperKind.INTERFACE_TYPE]: (type) => new GraphQLInterfaceType(strip(type.toConfig())),
    [MapperKind.UNION_TYPE]: (type) => new GraphQLUnionType(strip(type.toConfig())),
    [MapperKind.ENUM_TYPE]: (type) => new GraphQLEnumType(strip(type.toConfig())),
    [MapperKind.INPUT_OBJECT_TYPE]: (type) => new GraphQLInputObjectType(strip(type.toConfig())),
    [MapperKind.COMPOSITE_FIELD]: (field) => strip(field),
    [MapperKind.ENUM_VALUE]: (value) => strip(value),
    [MapperKind.INPUT_OBJECT_FIELD]: (field) => strip(field),
  });
}
