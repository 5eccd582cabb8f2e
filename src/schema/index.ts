import { GraphQLLiveDirective } from '@n1ru4l/graphql-live-query';
import { GraphQLDeferDirective, GraphQLStreamDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  type ConstArgumentNode,
  DirectiveLocation,
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLNonNull,
  type GraphQLSchema,
  Kind,
  specifiedDirectives,
} from 'graphql';
import release from '../../contract/release.json' with { type: 'json' };
import { builder } from '../builder.js';
import { DEFAULT_LEGACY_SUNSET_DATE, type LegacyPolicy } from '../legacy.js';
import './category.js';
import './events.js';
import './inventory.js';
import './order.js';
import './pet.js';
import { withContractVersion } from './contract-version.js';
import { costDirective, listSizeDirective } from '../pothos-plugins/cost.js';
import { toSubgraphSchema, withoutFederationDirectives } from './federation.js';

builder.queryType({ description: 'Reads: the catalogue, stock and orders.' });
builder.mutationType({ description: 'Writes: each one transaction, refused whole when any rule fails.' });

const StabilityLevel = new GraphQLEnumType({
  name: 'StabilityLevel',
  description: 'How settled an operation is.',
  values: {
    EXPERIMENTAL: { description: 'May change or go away without notice.' },
    BETA: { description: 'Complete, but its shape may still change.' },
  },
});

const stabilityDirective = new GraphQLDirective({
  name: 'stability',
  description: 'Marks an operation that is not yet stable. The same word leads its description.',
  locations: [DirectiveLocation.FIELD_DEFINITION],
  args: { level: { type: new GraphQLNonNull(StabilityLevel), description: 'How settled it is.' } },
});

const buildOptions = {
  // graphql-js' own directives (@include, @skip, @deprecated…) too: a schema given a list has only those.
  // @defer and @stream, which yoga's defer-stream plugin serves, belong to the schema clients validate against;
  // so does @live, which marks a query to keep fresh (src/http/live-queries/).
  directives: [
    ...specifiedDirectives,
    GraphQLDeferDirective,
    GraphQLStreamDirective,
    GraphQLLiveDirective,
    stabilityDirective,
    costDirective,
    listSizeDirective,
  ],
  sortSchema: true,
};

/** The version of the last GraphQL release (contract/, `npm run contract:release`). */
const withReleasedVersion = (built: GraphQLSchema) => withContractVersion(built, release.graphql.version);

/** The standalone schema: what schema.graphql prints and contract/ releases. */
export const schema: GraphQLSchema = withReleasedVersion(withoutFederationDirectives(builder.toSchema(buildOptions)));

/** The legacy lookup's deprecation naming the configured sunset date when it is not the default. */
function withSunsetDate(built: GraphQLSchema, legacy: LegacyPolicy): GraphQLSchema {
  if (legacy.sunsetDate === DEFAULT_LEGACY_SUNSET_DATE) return built;
  const reason: ConstArgumentNode = {
    kind: Kind.ARGUMENT,
    name: { kind: Kind.NAME, value: 'reason' },
    value: { kind: Kind.STRING, value: legacy.deprecationReason },
  };
  return mapSchema(built, {
    [MapperKind.ROOT_FIELD]: (field, fieldName) => {
      if (fieldName !== 'getPetById') return field;
      // The syntax node too: the subgraph SDL (_service) is printed from it.
      const astNode = field.astNode && {
        ...field.astNode,
        directives: field.astNode.directives?.map((node) => (node.name.value === 'deprecated' ? { ...node, arguments: [reason] } : node)),
      };
      return { ...field, deprecationReason: legacy.deprecationReason, astNode };
    },
  });
}

let defaultSubgraph: GraphQLSchema | undefined;

/**
 * The schema as an Apollo Federation v2 subgraph (src/schema/federation.ts): the standalone
 * schema's types and fields, with `_entities`, `_service` and the federation directives. Built
 * on first use: a gateway that is no subgraph never builds it.
 */
export function subgraphSchema(legacy?: LegacyPolicy): GraphQLSchema {
  const finish = (built: GraphQLSchema) => {
    const versioned = withReleasedVersion(built);
    return legacy ? withSunsetDate(versioned, legacy) : versioned;
  };
  if (legacy && legacy.sunsetDate !== DEFAULT_LEGACY_SUNSET_DATE) return toSubgraphSchema(buildOptions, finish);
  defaultSubgraph ??= toSubgraphSchema(buildOptions, finish);
  return defaultSubgraph;
}

/**
 * The schema as served: the printed one (or, with `federation`, the subgraph schema), with the
 * legacy lookup's deprecation naming the configured sunset date.
 */
export function servedSchema(legacy: LegacyPolicy, options: { federation?: boolean } = {}): GraphQLSchema {
  return options.federation ? subgraphSchema(legacy) : withSunsetDate(schema, legacy);
}
