import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';

/**
 * Compiled execution (graphql-jit) hands each resolver a path object of its
 * own, where graphql-js hands a child the very path object of its parent.
 * Pothos' Prisma plugin finds the selection it planned for a nested field by
 * the identity of the path objects above it, so under jit a relation two
 * levels down found no plan and was loaded row by row. This plugin gives the
 * resolvers that take part in that lookup, under a compiled request, one
 * canonical path object per response path (per operation, chained to its
 * parent's), so identity means what it means under graphql-js. Requests run
 * by graphql-js, and every other field, are passed through untouched: a scalar
 * column never looks at its path, and it is most of the calls.
 */

type Path = GraphQLResolveInfo['path'];

/**
 * Set on a request's context by the execution that compiles it (src/http/plugins/use-compiled-execution.ts):
 * the path links of its operation, shared by every request of it.
 */
export const CANONICAL_PATHS = Symbol.for('petstore.canonicalPaths');

/** A response path link as graphql-js makes them, plus the links beneath it, found by key. */
interface CanonicalLink {
  readonly prev: CanonicalLink | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
  children?: Map<string | number, CanonicalLink>;
}

/**
 * The links of one compiled operation, shared by every request of it. The Prisma plugin keeps its
 * per-request state in weak maps keyed by these links, and remembers the key string of each link in
 * a process-wide weak map: links made anew for every request cost it a weak-map insertion per link
 * and row (10% of the samples of a pets page, with the collector's weak-map work on top), shared
 * ones a lookup. The tree grows to the response paths the operation has answered, up to `maxLinks`;
 * past that, a request's further links are its own (correct, only slower). It goes with the
 * compiled operation that holds it.
 */
export interface PathTree {
  readonly roots: Map<string | number, CanonicalLink>;
  links: number;
  readonly maxLinks: number;
  /** The links of every tree of the process, for /metrics. */
  readonly total: { links: number };
}

export function createPathTree(maxLinks: number, total: { links: number }): PathTree {
  return { roots: new Map(), links: 0, maxLinks, total };
}

/** What one request of a compiled operation uses: the shared tree, and its own links past the tree's bound. */
export interface RequestPaths {
  readonly tree: PathTree;
  readonly own: Map<CanonicalLink | undefined, Map<string | number, CanonicalLink>>;
}

export const requestPaths = (tree: PathTree): RequestPaths => ({ tree, own: new Map() });

function canonical(paths: RequestPaths, path: Path): CanonicalLink {
  const prev = path.prev ? canonical(paths, path.prev) : undefined;
  const shared = prev ? prev.children : paths.tree.roots;
  let link = shared?.get(path.key) ?? paths.own.get(prev)?.get(path.key);
  if (link) return link;
  link = { prev, key: path.key, typename: path.typename };
  if (paths.tree.links < paths.tree.maxLinks) {
    let children = shared;
    if (!children) {
      children = new Map();
      (prev as CanonicalLink).children = children;
    }
    children.set(path.key, link);
    paths.tree.links++;
    paths.tree.total.links++;
  } else {
    let own = paths.own.get(prev);
    if (!own) {
      own = new Map();
      paths.own.set(prev, own);
    }
    own.set(path.key, link);
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
      const paths = (context as Record<symbol, RequestPaths | undefined>)[CANONICAL_PATHS];
      if (paths) {
        // graphql-jit builds a fresh info object (and path chain) for every call: ours to change.
        (info as { path: Path }).path = canonical(paths, info.path) as Path;
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
