import { getMappedArgumentValues, isThenable } from '@pothos/core';
import { RequestCache } from '@pothos/plugin-scope-auth';
import { type FieldNode, type GraphQLField, type GraphQLObjectType, type GraphQLResolveInfo, type GraphQLSchema, type GraphQLUnionType, isObjectType } from 'graphql';
import { builder } from '../../builder.js';

/**
 * What query plans read of the schema Pothos built, in one place: the Prisma model behind an
 * object type and the columns it always selects, the relation behind a field, how a scalar field
 * reads its row, a field's arguments as its resolver gets them, and the authorization rules a
 * field or a type states. Where Pothos offers public API it is used (`getMappedArgumentValues`,
 * scope-auth's `RequestCache`); the rest is read from the keys Pothos and its Prisma plugin put in
 * the built schema's extensions, and test/graphql/schema-facts.test.ts pins each of them, so an
 * upgrade that moves one fails that test instead of leaving plans to drift.
 */

type Extensions = Readonly<Record<string, unknown>> | null | undefined;
type Row = Record<string, unknown>;

/** The Prisma model of an object type built with `prismaObject`, and the columns it always selects (its select mode). */
export function prismaObjectOf(type: GraphQLObjectType): { model: string; select: Row } | undefined {
  const extensions = type.extensions as Extensions;
  const model = extensions?.pothosPrismaModel;
  const select = extensions?.pothosPrismaSelect;
  if (typeof model !== 'string' || !select || typeof select !== 'object') return undefined;
  return { model, select: select as Row };
}

/** The Prisma relation a field reads (`t.relation`, `t.relatedConnection`: the model's field of that name), if it reads one. */
export function relationOf(field: GraphQLField<unknown, unknown>): string | undefined {
  const relation = (field.extensions as Extensions)?.pothosPrismaRelationField as { name?: unknown } | undefined;
  return typeof relation?.name === 'string' ? relation.name : undefined;
}

/**
 * How a scalar field reads its row without its resolver being called: what the field declares for
 * plans (`plannedRow`), the exposed column (`t.expose*`), or the field's own resolver when it reads
 * the row alone (a function of one parameter). Undefined when it needs more (arguments, the
 * context): such a field is not planned.
 */
export function rowReaderOf(field: GraphQLField<unknown, unknown>): ((row: Row) => unknown) | undefined {
  const extensions = field.extensions as Extensions;
  // Declared beside the field for plans (a global id: src/pothos-plugins/global-ids.ts).
  if (typeof extensions?.plannedRow === 'function') return extensions.plannedRow as (row: Row) => unknown;
  const exposed = extensions?.pothosExposedField;
  if (typeof exposed === 'string') return (row) => row[exposed];
  const resolve = extensions?.pothosOriginalResolve;
  if (typeof resolve !== 'function' || resolve.length > 1) return undefined;
  return resolve as (row: Row) => unknown;
}

/**
 * A field's arguments as its resolver gets them: coerced, then mapped by the schema's argument
 * mappers (int64 ids arrive as bigints). Throws what the mappers throw (a refused id); a mapper
 * that answers later is not one a plan runs.
 */
export function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: Record<string, unknown>, schema: GraphQLSchema): Row {
  // What the mappers read of `info`: the variables, and the schema (the relay plugin's global ids).
  const mapped = getMappedArgumentValues(field, node, {}, { variableValues: variables, schema } as unknown as GraphQLResolveInfo);
  if (isThenable(mapped)) throw new Error(`${field.name}: asynchronous argument mappers are not planned`);
  return mapped as Row;
}

// ---- authorization ------------------------------------------------------------------------------

/** A scope map (`{ scope: 'orders:read' }`, `$any`, `$all`…), as scope-auth evaluates it. */
export type ScopeMap = Readonly<Record<string, unknown>>;

/**
 * The rules stated on a field, or on an object type and the interfaces it implements (or a union), that a
 * request must pass: `null` when one is of a form a plan cannot decide before it reads (a function
 * of the parent or the arguments, scopes granted to what lies below). Every map found is checked,
 * even where scope-auth would skip it (`skipTypeScopes`, type scopes run on `isTypeOf` only): a
 * plan that checks more than graphql-js only leaves more requests to graphql-js, which answers them
 * as it should.
 */
export function rulesOfField(field: GraphQLField<unknown, unknown>): ScopeMap[] | null {
  return rulesOf(field.extensions as Extensions);
}

export function rulesOfType(type: GraphQLObjectType | GraphQLUnionType): ScopeMap[] | null {
  const rules: ScopeMap[] = [];
  for (const owner of [type, ...(isObjectType(type) ? type.getInterfaces() : [])]) {
    const stated = rulesOf(owner.extensions as Extensions);
    if (stated === null) return null;
    rules.push(...stated);
  }
  return rules;
}

function rulesOf(extensions: Extensions): ScopeMap[] | null {
  const options = extensions?.pothosOptions as { authScopes?: unknown; grantScopes?: unknown } | undefined;
  if (!options) return [];
  if (options.grantScopes !== undefined) return null;
  const { authScopes } = options;
  if (authScopes === undefined) return [];
  if (typeof authScopes === 'boolean' || (typeof authScopes === 'object' && authScopes !== null)) return [authScopes as ScopeMap];
  return null;
}

/**
 * Whether the request whose GraphQL context is `context` passes every rule, as scope-auth itself
 * decides it: its own evaluation of each map, with the same per-request cache the resolvers use.
 * A rule that fails, or throws (the scope loaders here throw UNAUTHENTICATED or FORBIDDEN), is a
 * no: graphql-js then answers the request, with the error where the rule stands.
 */
export function passesRules(context: object, rules: readonly ScopeMap[]): boolean | Promise<boolean> {
  if (rules.length === 0) return true;
  const cache = RequestCache.fromContext(context as never, builder);
  let pending: Array<Promise<unknown>> | undefined;
  try {
    for (const rule of rules) {
      const failure = cache.evaluateScopeMap(rule as never);
      if (isThenable(failure)) (pending ??= []).push(Promise.resolve(failure));
      else if (failure !== null) return false;
    }
  } catch {
    return false;
  }
  if (!pending) return true;
  return Promise.all(pending).then(
    (failures) => failures.every((failure) => failure === null),
    () => false,
  );
}
