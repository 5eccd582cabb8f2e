import { DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import { pageSize } from './paging.js';

/*
 * The GraphQL Cost Directives (IBM's GraphQL Cost Directive specification, which Apollo's demand
 * control, WunderGraph Cosmo, Grafbase and Hive Gateway implement): `@cost(weight:)` says what a
 * field, argument or type costs beyond the defaults (1 for an object, 0 for a scalar or enum);
 * `@listSize` says how long a list may be, from its slicing arguments (`first`, `last`) or an
 * assumed size. The weight is an Int, as the routers read it (the specification's draft writes a
 * float as a string; every implementation that composes these directives took the integer).
 * src/http/demand/analysis.ts computes an operation's cost from them.
 */

export const costDirective = new GraphQLDirective({
  name: 'cost',
  description: 'What selecting this field, passing this argument or returning this type costs (the GraphQL Cost Directives).',
  locations: [
    DirectiveLocation.ARGUMENT_DEFINITION,
    DirectiveLocation.ENUM,
    DirectiveLocation.FIELD_DEFINITION,
    DirectiveLocation.INPUT_FIELD_DEFINITION,
    DirectiveLocation.OBJECT,
    DirectiveLocation.SCALAR,
  ],
  args: { weight: { type: new GraphQLNonNull(GraphQLInt), description: 'The cost, in points.' } },
});

export const listSizeDirective = new GraphQLDirective({
  name: 'listSize',
  description: 'How long the list this field returns may be (the GraphQL Cost Directives).',
  locations: [DirectiveLocation.FIELD_DEFINITION],
  args: {
    assumedSize: { type: GraphQLInt, description: 'Its length when no slicing argument says it.' },
    slicingArguments: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'The arguments that say its length.' },
    sizedFields: {
      type: new GraphQLList(new GraphQLNonNull(GraphQLString)),
      description: 'The fields of the returned object that the size applies to (a connection\'s edges and nodes), rather than the field itself.',
    },
    requireOneSlicingArgument: {
      type: GraphQLBoolean,
      defaultValue: true,
      description: 'Whether exactly one slicing argument must be given.',
    },
  },
});

/** What a field declares about its cost: a weight of its own, and the size of the list it returns. */
export interface CostDeclaration {
  weight?: number;
  list?: { assumedSize?: number; slicingArguments?: string[]; sizedFields?: string[]; requireOneSlicingArgument?: boolean };
}

/** A write: what a public API charges a mutation (Apollo's and Shopify's default of 10). */
export const WRITE = { weight: 10 } as const satisfies CostDeclaration;

/** A connection's totalCount: a count over the whole (filtered) list, one more statement. */
export const COUNT = { weight: 5 } as const satisfies CostDeclaration;

/**
 * A page of a connection: as long as `first` or `last` asks (20 when neither does, the page size
 * every list here has), sized on its `edges` and `nodes`.
 */
export const PAGE = {
  list: { slicingArguments: ['first', 'last'], sizedFields: ['edges', 'nodes'], assumedSize: pageSize.default, requireOneSlicingArgument: false },
} as const satisfies CostDeclaration;

type WithDirectives = { directives?: Record<string, unknown> };

/**
 * The one way a field declares its cost, beside its other options: spread it into the field's
 * options (`...costs(PAGE)`), or give it the options that also carry directives
 * (`...costs(WRITE, stability('BETA', …))`), whose directives it keeps.
 */
export function costs<Options extends WithDirectives = Record<never, never>>(declaration: CostDeclaration, options?: Options) {
  const { weight, list } = declaration;
  return {
    ...(options as Options),
    directives: {
      ...options?.directives,
      ...(weight === undefined ? {} : { cost: { weight } }),
      // Only the arguments given: an absent one would be printed as null.
      ...(list ? { listSize: Object.fromEntries(Object.entries(list).filter(([, value]) => value !== undefined)) } : {}),
    },
  } as Omit<Options, 'directives'> & { directives: NonNullable<Options['directives']> & { cost?: { weight: number }; listSize?: NonNullable<CostDeclaration['list']> } };
}
