import { GraphQLDeferDirective, GraphQLStreamDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  DirectiveLocation,
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLNonNull,
  type GraphQLSchema,
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

// graphql-js' own directives (@include, @skip, @deprecated…) too: a schema given a list has only those.
export const schema: GraphQLSchema = withContractVersion(
  builder.toSchema({
    // @defer and @stream, which yoga's defer-stream plugin serves, belong to the schema clients validate against.
    directives: [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective, stabilityDirective],
    sortSchema: true,
  }),
  // The version of the last GraphQL release (contract/, `npm run contract:release`).
  release.graphql.version,
);


/**
 * The schema as served: the printed one, with the legacy lookup's deprecation
 * naming the configured sunset date when it is not the default.
 */
export function servedSchema(legacy: LegacyPolicy): GraphQLSchema {
  if (legacy.sunsetDate === DEFAULT_LEGACY_SUNSET_DATE) return schema;
  return mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (field, fieldName) =>
      fieldName === 'getPetById' ? { ...field, deprecationReason: legacy.deprecationReason } : field,
  });
}
