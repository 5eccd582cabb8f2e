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
 * The links of the root fields, per operation (so per document: yoga's parse cache and jit's cache
 * hand every request with the same text the same nodes), shared by every request of it. The
 * Prisma plugin keeps its per-request state in weak maps keyed by these links, and remembers the
 * key string of each link in a process-wide weak map: links made anew for every request cost it a
 * weak-map insertion per link and row (10% of the samples of a pets page, with the collector's
 * weak-map work on top), shared ones a lookup. The tree goes when its operation does, and grows to
 * the response paths the operation has answered (bounded by its page sizes).
 */
const rootsByOperation = new WeakMap<object, Map<string | number, CanonicalLink>>();
function rootsOf(operation: object): Map<string | number, CanonicalLink> {
  let roots = rootsByOperation.get(operation);
  if (!roots) {
    roots = new Map();
    rootsByOperation.set(operation, roots);
  }
  return roots;
}

function canonical(operation: object, path: Path): CanonicalLink {
  const prev = path.prev ? canonical(operation, path.prev) : undefined;
  let children = prev ? prev.children : rootsOf(operation);
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
        (info as { path: Path }).path = canonical(info.operation, info.path) as Path;
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
