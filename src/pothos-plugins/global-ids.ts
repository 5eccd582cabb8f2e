import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { type Principal, requireScope, type Scope, scopes } from '../auth/scopes.js';
import { MAX_INT64 } from '../domain/ids.js';
import { validationFailed } from '../errors.js';

/**
 * Global object identification, as Relay clients expect it: every entity a client may refetch
 * implements `Node` with a global id (`nodeId`), and `node(id:)`/`nodes(ids:)` find it again. A
 * global id is opaque to clients: base64 of `Type:id`, as Relay's own graphql-relay-js makes them.
 * The spec's ids (`id`, `petId`) keep their meaning beside it, in GraphQL and REST alike.
 *
 * Declared here once, for the schema (src/builder.ts, the types) and the query plans alike: each Node
 * type, its Prisma model, the column its global id is made of, and the scope that reading one by its
 * global id needs (an order needs `orders:read`, as `order(id:)` does).
 */
export const NODE_ID_FIELD = 'nodeId';

export interface NodeType {
  model: 'pet' | 'category' | 'order' | 'inventoryItem';
  key: string;
  scope?: Scope;
}

const NODE_TYPES = {
  Pet: { model: 'pet', key: 'id' },
  Category: { model: 'category', key: 'id' },
  Order: { model: 'order', key: 'id', scope: scopes.readOrders },
  InventoryItem: { model: 'inventoryItem', key: 'petId' },
} as const satisfies Record<string, NodeType>;

export const nodeTypes: Readonly<Record<string, NodeType>> = NODE_TYPES;

/** The largest number of global ids `nodes(ids:)` takes at once. */
export const MAX_NODES = 100;

export const encodeNodeId = (typename: string, id: bigint | number | string): string => encodeGlobalID(typename, String(id));

/**
 * What a global id names: one of the Node types and an int64 id. Anything else (not base64 of
 * `Type:id` exactly as encodeNodeId writes it, a type that is no Node here, an id out of range) is
 * VALIDATION_FAILED, naming the argument.
 */
export function decodeNodeId(globalId: string, argument = 'id'): { typename: string; id: string } {
  let decoded: { typename: string; id: string } | undefined;
  try {
    decoded = decodeGlobalID(globalId);
  } catch {
    decoded = undefined;
  }
  const id = decoded && /^\d{1,19}$/.test(decoded.id) ? BigInt(decoded.id) : 0n;
  // Only the text this API writes: base64 decodes leniently (a space, no padding) and `Pet:01` is pet 1,
  // whose answer would then carry a nodeId other than the one asked for, and a client's cache keyed by it miss.
  if (!decoded || !Object.hasOwn(nodeTypes, decoded.typename) || id < 1n || id > MAX_INT64 || encodeNodeId(decoded.typename, id) !== globalId) {
    throw validationFailed(argument, `${argument} must be a global id this API gave out (a nodeId), got "${globalId.slice(0, 60)}".`);
  }
  return { typename: decoded.typename, id: String(id) };
}

/** VALIDATION_FAILED when nodes(ids:) is asked for more than it takes at once. */
export function checkNodeCount(ids: readonly unknown[]): void {
  if (ids.length > MAX_NODES) throw validationFailed('ids', `ids must list at most ${MAX_NODES} global ids, got ${ids.length}.`);
}

/** UNAUTHENTICATED or FORBIDDEN when the caller may not read a node of this type by its global id. */
export function authorizeNode(principal: Principal, typename: string): void {
  const scope = nodeTypes[typename]?.scope;
  if (scope) requireScope(principal, scope);
}

/**
 * A Node type's global id field, prismaNode's `id`: made of the column its type declares above, by
 * the field's resolver and by a plan from the row alike.
 */
export function globalId<T extends keyof typeof NODE_TYPES>(typename: T) {
  const key: (typeof NODE_TYPES)[T]['key'] = NODE_TYPES[typename].key;
  return { field: key, extensions: { plannedRow: (row: Record<string, unknown>) => encodeNodeId(typename, row[key] as bigint) } };
}
