import { GraphQLSchema } from 'graphql';

/*
 * The GraphQL contract's version (its own line, apart from the REST routes'
 * OpenAPI document) is carried by the schema's description, as the OpenAPI
 * document carries its version in info.version: it is the schema's own
 * metadata, so it goes wherever the schema goes. GraphQL clients and tools
 * read it where they already look: introspection (`{ __schema { description } }`,
 * in the spec since its October 2021 edition), GraphiQL's documentation pane,
 * the printed schema.graphql and the copy in contract/, codegen and schema
 * registries. A query field for it would itself be a change to the contract
 * (and one more thing to deprecate some day); an `extensions` entry would
 * weigh on every answer, and most clients drop extensions unread. With
 * introspection off (production's default), `__schema { description }` alone
 * still answers (see use-query-limits.ts).
 */

const VERSION_IN_DESCRIPTION = /Contract version: (\d+\.\d+\.\d+)/;

export function schemaDescription(version: string): string {
  return [
    `The Petstore API. Contract version: ${version}.`,
    '',
    'Semantic versioning of this schema alone: a new major only for a change that can break a client written',
    'against the version before, a minor for additions, a patch for texts. The REST routes (GET /openapi.json)',
    'have a version line of their own.',
  ].join('\n');
}

/** `schema` with the description naming `version`, and nothing else changed. */
export function withContractVersion(schema: GraphQLSchema, version: string): GraphQLSchema {
  return new GraphQLSchema({ ...schema.toConfig(), description: schemaDescription(version) });
}

/** The version a schema description names, if it names one. */
export function contractVersionIn(description: string | null | undefined): string | undefined {
  return description ? VERSION_IN_DESCRIPTION.exec(description)?.[1] : undefined;
}
