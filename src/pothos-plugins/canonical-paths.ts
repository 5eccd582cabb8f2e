import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';

/**
 * Compiled execution (graphql-jit) hands each resolver a path object of its
 * own, where graphql-js hands a child the very path object of its parent.
 * Pothos' Prisma plugin finds the selection it planned for a nested field by
 * the identity of the path objects above it, so under jit a relation two
 * levels down found no plan and was loaded row by row. This plugin gives the
 * resolvers that take part in that lookup, under a compiled request, one
 * canonical path object per response path (per request, chained to its
 * parent's), so identity means what it means under graphql-js. Requests run
 * by graphql-js, and every other field, are passed through untouched: a scalar
 * column never looks at its path, and it is most of the calls.
 */

type Path = GraphQLResolveInfo['path'];

/** Set on a request's context by the execution that compiles it (src/http/plugins/use-compiled-execution.ts). */
export const COMPILED_EXECUTION = Symbol.for('petstore.compiledExecution');

/** A response path link as graphql-js makes them, plus the links beneath it, found by key. */
interface CanonicalLink {
  readonly prev: CanonicalLink | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
  children?: Map<string | number, CanonicalLink>;
}

/**
 * The links of the root fields of one request, kept on the request's context itself rather than in
 * a WeakMap keyed by it: the links are keys of the Prisma plugin's own weak maps, and a chain of
 * weak maps made V8's full collections pause about 60 ms (8 ms without it) under load.
 */
const ROOTS = Symbol('canonicalPathRoots');
function rootsOf(context: object): Map<string | number, CanonicalLink> {
  const holder = context as { [ROOTS]?: Map<string | number, CanonicalLink> };
  return (holder[ROOTS] ??= new Map());
}

function canonical(context: object, path: Path): CanonicalLink {
  const prev = path.prev ? canonical(context, path.prev) : undefined;
  let children = prev ? prev.children : rootsOf(context);
  if (!children) {
    children = new Map();
    (prev as CanonicalLink).children = children;
  }
  let link = children.get(path.key);
  if (!link) {
    link = { prev, key: path.key, typename: path.typename };
    children.set(path.key, link);
  }
  return link;
}

export class CanonicalPathsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (!this.readsPlannedSelections(fieldConfig)) return resolver;
    return (parent, args, context, info) => {
      if ((context as Record<symbol, unknown>)[COMPILED_EXECUTION]) {
        // graphql-jit builds a fresh info object (and path chain) for every call: ours to change.
        (info as { path: Path }).path = canonical(context as object, info.path) as Path;
      }
      return resolver(parent, args, context, info);
    };
  }

  /**
   * Whether the Prisma plugin may record or look up a planned selection by this field's path:
   * root fields (prismaField, prismaConnection), relations, and fields that return a Prisma
   * object (a connection edge's node, an event's pet), which may plan from their info.
   */
  private readsPlannedSelections(fieldConfig: PothosOutputFieldConfig<Types>): boolean {
    if (fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation' || fieldConfig.kind === 'Subscription') return true;
    if (fieldConfig.extensions?.pothosPrismaSelect) return true;
    let type = fieldConfig.type;
    while (type.kind === 'List') type = type.type;
    if (type.kind !== 'Object' && type.kind !== 'Interface') return false;
    return Boolean(this.buildCache.getTypeConfig(type.ref).extensions?.pothosPrismaModel);
  }
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Pothos registers plugins by merging into its namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      canonicalPaths: CanonicalPathsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('canonicalPaths', CanonicalPathsPlugin);
