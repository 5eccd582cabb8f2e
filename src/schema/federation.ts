import { printSubgraphSchema } from '@apollo/subgraph';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { createContextCache } from '@pothos/core';
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
import { builder, type GraphQLContext } from '../builder.js';
import { parseId } from '../domain/ids.js';
import { authorizeNode, nodeTypes } from '../pothos-plugins/global-ids.js';
import { validationFailed } from '../errors.js';
import { Category } from './category.js';
import { InventoryItem } from './inventory.js';
import { Order } from './order.js';
import { Pet } from './pet.js';
import { delegateOf, type PlannedRead } from './plans.js';

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

type Keyed = Record<string, unknown>;

/**
 * The entities are the Node types (src/pothos-plugins/global-ids.ts), each keyed by the column its
 * global id is made of, and read by a client with the scope reading it by its global id needs: one
 * declaration for node(id:), `_entities` and their plans.
 */
type EntityType = keyof typeof nodeTypes & string;

/** The entity type a representation names, if it names one. */
function entityTypeOf(representation: unknown): EntityType | undefined {
  const typename = (representation as Keyed | null)?.__typename;
  return typeof typename === 'string' && Object.hasOwn(nodeTypes, typename) ? typename : undefined;
}

function notAnEntity(representation: unknown) {
  const typename = (representation as Keyed | null)?.__typename;
  const named = typeof typename === 'string' ? `"${typename.slice(0, 60)}"` : 'no __typename';
  return validationFailed('representations', `A representation names ${named}, which is not an entity of this subgraph.`);
}

/** A representation's key, parsed as its type's key column holds it. */
function keyOf(typename: EntityType, representation: unknown): bigint {
  const { key: column } = nodeTypes[typename]!;
  const key = (representation as Keyed)[column];
  if (typeof key !== 'string' && typeof key !== 'number') {
    throw validationFailed('representations', `A ${typename} representation needs its key ${column} (an int64 id as a string).`);
  }
  return parseId(key, column);
}

/**
 * `_entities` for query plans: what each representation names, in order. One that names nothing
 * throws, and graphql-js answers the request, with that item's error at its index.
 */
const plannedEntities: PlannedRead = {
  kind: 'node',
  list: true,
  named: ({ representations }) =>
    (representations as unknown[]).map((representation) => {
      const typename = entityTypeOf(representation);
      if (!typename) throw notAnEntity(representation);
      return { typename, id: String(keyOf(typename, representation)) };
    }),
};

/**
 * One loader per request, `_entities` field (an alias has its own selection) and type: every
 * representation of that type in the field is read by one statement, whatever their number. Kept
 * among Pothos' caches of the request, which are let go when its execution ends (useRequestCaches).
 */
const loadersOf = createContextCache(() => new Map<string, DataLoader<bigint, unknown>>());

function loaderFor(typename: EntityType, ctx: GraphQLContext, info: GraphQLResolveInfo): DataLoader<bigint, Keyed | null> {
  const byField = loadersOf(ctx);
  const name = `${typename}@${info.path.key}`;
  let loader = byField.get(name) as DataLoader<bigint, Keyed | null> | undefined;
  if (!loader) {
    const { model, key } = nodeTypes[typename]!;
    loader = new DataLoader<bigint, Keyed | null>(async (keys) => {
      // Planned once for the whole batch: what the operation selects on this type under `_entities`,
      // recorded for the fields beneath so that its relations are read by this statement too.
      const query = queryFromInfo({ context: ctx, info, typeName: typename });
      const rows = await delegateOf(ctx.prisma, model).findMany({ ...query, where: { [key]: { in: [...keys] } } });
      const byKey = new Map(rows.map((row) => [String(row[key]), row]));
      return keys.map((one) => byKey.get(String(one)) ?? null);
    });
    byField.set(name, loader as DataLoader<bigint, unknown>);
  }
  return loader;
}

/** Async, so that a refusal is the item's rejection; the load joins its batch before the first await. */
function resolveReferenceOf(typename: EntityType) {
  return async (representation: Keyed, ctx: GraphQLContext, info: GraphQLResolveInfo) => {
    authorizeNode(ctx.principal, typename);
    return loaderFor(typename, ctx, info).load(keyOf(typename, representation)) as Promise<never>;
  };
}

// The key selections name our `ID` fields; a router sends their values as the strings we answer with.
builder.asEntity(Pet, { key: builder.selection<{ id: string }>('id'), resolveReference: resolveReferenceOf('Pet') });
builder.asEntity(Category, { key: builder.selection<{ id: string }>('id'), resolveReference: resolveReferenceOf('Category') });
builder.asEntity(Order, { key: builder.selection<{ id: string }>('id'), resolveReference: resolveReferenceOf('Order') });
builder.asEntity(InventoryItem, { key: builder.selection<{ petId: string }>('petId'), resolveReference: resolveReferenceOf('InventoryItem') });

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
    const typename = entityTypeOf(representation);
    const type = typename ? info.schema.getType(typename) : undefined;
    const resolveReference = isObjectType(type)
      ? (type.extensions as { apollo?: { subgraph?: { resolveReference?: ReferenceResolver } } }).apollo?.subgraph?.resolveReference
      : undefined;
    if (!type || !resolveReference) return notAnEntity(representation);
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
        if (name === '_entities') {
          return {
            ...field,
            resolve: resolveEntities as GraphQLFieldResolver<unknown, unknown>,
            extensions: { ...field.extensions, plannedRead: plannedEntities },
          };
        }
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
