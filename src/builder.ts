import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { DateTimeResolver } from 'graphql-scalars';
import './pothos-plugins/int64-ids.js';
import './pothos-plugins/paging.js';
import { type Principal, requireScope, type Scope } from './auth/scopes.js';
import { authorizeNode, checkNodeCount, decodeNodeId, encodeNodeId, MAX_NODES, NODE_ID_FIELD } from './pothos-plugins/global-ids.js';
import { costs } from './pothos-plugins/cost.js';
import type { PrismaClient } from './database/client.js';
import type { EventPublisher } from './domain/events.js';
import type { Lookups } from './domain/lookups.js';
import type { PetstorePubSub } from './events/bus.js';
import type { LegacyPolicy } from './legacy.js';
import type PrismaTypes from './generated/pothos-prisma-types.js';
import { getDatamodel } from './generated/pothos-prisma-types.js';

/** What every resolver receives: the process's Prisma client and the request's identity. */
export interface GraphQLContext {
  prisma: PrismaClient;
  requestId: string;
  /** Who is asking: verified by the HTTP layer before GraphQL runs. */
  principal: Principal;
  /** Single-row reads gathered across concurrent requests into one statement (src/domain/lookups.ts). */
  lookups: Lookups;
  /** Where writes announce what they changed, after commit. */
  events: EventPublisher;
  /** Subscriptions listen here. */
  pubsub: PetstorePubSub;
  /** When the legacy lookup goes away, and what it does after. */
  legacy: LegacyPolicy;
}

/** The stability markers of the spec; shown as a directive and at the start of descriptions. */
export type StabilityLevel = 'EXPERIMENTAL' | 'BETA';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  // A field names the scope it needs: `authScopes: { scope: scopes.readOrders }`.
  AuthScopes: { scope: Scope };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    // int64 ids travel as strings; resolvers turn bigints into decimal text.
    ID: { Input: string; Output: string };
  };
  Directives: {
    stability: { locations: 'FIELD_DEFINITION'; args: { level: StabilityLevel } };
    // The GraphQL Cost Directives (IBM's specification, as Apollo, Cosmo, Grafbase and Hive read them): src/pothos-plugins/cost.ts.
    cost: { locations: 'FIELD_DEFINITION' | 'ARGUMENT_DEFINITION' | 'OBJECT'; args: { weight: number } };
    listSize: {
      locations: 'FIELD_DEFINITION';
      args: { assumedSize?: number; slicingArguments?: string[]; sizedFields?: string[]; requireOneSlicingArgument?: boolean };
    };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // `paging`: src/pothos-plugins/paging.ts, the page-size and cursor rule of every connection.
  // `int64Ids`: src/pothos-plugins/int64-ids.ts, id arguments that arrive parsed as bigints.
  plugins: [ScopeAuthPlugin, 'paging', 'int64Ids', DirectivesPlugin, FederationPlugin, PrismaPlugin, RelayPlugin],
  scopeAuth: {
    // A subscription is refused when it starts, not at its first event.
    authorizeOnSubscribe: true,
    // requireScope throws the same UNAUTHENTICATED / FORBIDDEN error the REST routes give.
    authScopes: (ctx) => ({
      scope: (needed: Scope) => {
        requireScope(ctx.principal, needed);
        return true;
      },
    }),
  },
  defaultFieldNullability: false,
  // Directives as graphql-tools expects them, so printSchemaWithDirectives prints them once.
  directives: { useGraphQLToolsUnorderedDirectives: true },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    // totalCount of a filtered connection counts what the filter matches.
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'warn',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Global object identification (src/pothos-plugins/global-ids.ts): `id` stays the spec's int64 id, so the
    // global id is `nodeId` (Relay: schemaConfig.nodeInterfaceIdField).
    idFieldName: NODE_ID_FIELD,
    idFieldOptions: { description: 'A global id of this object, for node(id:) and Relay: opaque, unique across every type.' },
    encodeGlobalID: (typename, id) => encodeNodeId(typename, id),
    decodeGlobalID: (globalId) => decodeNodeId(globalId),
    nodeTypeOptions: { description: 'An object a client can find again by its global id (nodeId), as Relay refetches it.' },
    nodeQueryOptions: {
      description: 'The object with this global id (a nodeId), or null when there is none. An order needs orders:read.',
      args: { id: { description: 'A global id, as a nodeId field gave it.' } },
      // For plans (src/schema/plans.ts, PlannedRead 'node'): the objects the arguments name, decoded by the relay plugin.
      extensions: { plannedRead: { kind: 'node', list: false, named: (args: { id: unknown }) => [args.id] } },
      resolve: (_root, { id }, ctx, _info, resolveNode) => {
        authorizeNode(ctx.principal, id.typename);
        return resolveNode(id);
      },
    },
    nodesQueryOptions: {
      description: `The objects with these global ids, in their order, null where there is none (at most ${MAX_NODES}). An order needs orders:read.`,
      ...costs({ list: { assumedSize: MAX_NODES } }),
      args: { ids: { description: `Global ids, as nodeId fields gave them; at most ${MAX_NODES}.` } },
      extensions: {
        plannedRead: {
          kind: 'node',
          list: true,
          named: (args: { ids: unknown[] }) => {
            checkNodeCount(args.ids);
            return args.ids;
          },
        },
      },
      resolve: (_root, { ids }, ctx, _info, resolveNodes) => {
        checkNodeCount(ids);
        // A node the caller may not read is an error at its own index; the others are read together.
        const refusals = ids.map(({ typename }) => {
          try {
            authorizeNode(ctx.principal, typename);
            return undefined;
          } catch (error) {
            return error;
          }
        });
        const loaded = resolveNodes(ids.filter((_, index) => refusals[index] === undefined));
        let next = 0;
        return ids.map((_, index) => {
          if (refusals[index] !== undefined) return Promise.reject(refusals[index] as Error);
          const at = next++;
          return loaded.then((nodes) => nodes[at]);
        });
      },
    },
    // Shareable in a supergraph: another subgraph with Relay connections defines the same PageInfo.
    pageInfoTypeOptions: { description: 'Where a page stands in its list (Relay cursor connections).', shareable: true },
    defaultConnectionTypeOptions: { description: 'One page of a list, with its edges and where it stands.' },
    defaultEdgeTypeOptions: { description: 'One item of a page, with the cursor that points at it.' },
    defaultConnectionFieldOptions: { description: 'A page of the list.' },
    edgesFieldOptions: { nullable: false, description: 'The items of this page, in order, each with its cursor.' },
    // `nodes` beside `edges`, as GitHub's and PostGraphile's connections have: the items without cursors.
    nodesOnConnection: { description: 'The items of this page, in order (the nodes of edges).' },
    nodeFieldOptions: { nullable: false, description: 'The item.' },
    cursorFieldOptions: { description: 'Points at this item: pass it as after or before to page from here.' },
    pageInfoFieldOptions: { description: 'Where this page stands in the list.' },
    hasNextPageFieldOptions: { description: 'Whether more items follow this page.' },
    hasPreviousPageFieldOptions: { description: 'Whether items come before this page.' },
    startCursorFieldOptions: { description: 'The cursor of the first item of this page.' },
    endCursorFieldOptions: { description: 'The cursor of the last item of this page.' },
    firstArgOptions: { description: 'How many items from the start (or after `after`): 0 to 100, 20 when not given.' },
    lastArgOptions: { description: 'How many items from the end (or before `before`): 0 to 100.' },
    afterArgOptions: { description: 'Start after the item with this cursor.' },
    beforeArgOptions: { description: 'End before the item with this cursor.' },
  },
});

builder.addScalarType('DateTime', DateTimeResolver, {});
