import SchemaBuilder, { BasePlugin, createContextCache, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';

/**
 * Compiled execution (graphql-jit) hands each resolver a path object of its
 * own, where graphql-js hands a child the very path object of its parent.
 * Pothos' Prisma plugin finds the selection it planned for a nested field by
 * the identity of the path objects above it, so under jit a relation two
 * levels down found no plan and was loaded row by row. This plugin gives every
 * resolver of a compiled request one canonical path object per response path
 * (per request, chained to its parent's), so identity means what it means
 * under graphql-js. Requests run by graphql-js are passed through untouched.
 */

type Path = GraphQLResolveInfo['path'];

/** Set on a request's context by the execution that compiles it (src/http/plugins/use-compiled-execution.ts). */
export const COMPILED_EXECUTION = Symbol.for('petstore.compiledExecution');

const ROOT = {};
const linksOf = createContextCache(() => new WeakMap<object, Map<string | number, Path>>());

function canonical(context: object, path: Path): Path {
  const links = linksOf(context);
  const prev = path.prev ? canonical(context, path.prev) : undefined;
  const parent = prev ?? ROOT;
  let byKey = links.get(parent);
  if (!byKey) {
    byKey = new Map();
    links.set(parent, byKey);
  }
  let link = byKey.get(path.key);
  if (!link) {
    link = { prev, key: path.key, typename: path.typename };
    byKey.set(path.key, link);
  }
  return link;
}

export class CanonicalPathsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    _fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    return (parent, args, context, info) => {
      if (!(context as Record<symbol, unknown>)[COMPILED_EXECUTION]) return resolver(parent, args, context, info);
      const path = canonical(context as object, info.path);
      return resolver(parent, args, context, Object.create(info, { path: { value: path, enumerable: true } }));
    };
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
