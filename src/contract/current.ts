import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { GRAPHQL_PATH, OPENAPI_PATH } from '../http/routes.js';
import { openApiDocument } from '../http/transports/openapi.js';
import { DEFAULT_LEGACY_AFTER_SUNSET, DEFAULT_LEGACY_SUNSET_DATE, legacyPolicy } from '../legacy.js';
import { schema } from '../schema/index.js';

/**
 * The two published contracts as the code defines them now, with the default
 * settings (a gateway started with another LEGACY_SUNSET_DATE serves the same
 * contract with another date in its texts).
 */
export interface Contracts {
  /** The GraphQL schema, printed with its directives (@deprecated, @stability), as schema.graphql is. */
  graphql: string;
  /** The OpenAPI document of the REST routes, as GET /openapi.json serves it. */
  openapi: OpenApiDocument;
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;

export function currentContracts(): Contracts {
  const legacy = legacyPolicy(
    { sunsetDate: DEFAULT_LEGACY_SUNSET_DATE, afterSunset: DEFAULT_LEGACY_AFTER_SUNSET },
    { successor: GRAPHQL_PATH, policy: OPENAPI_PATH },
  );
  return { graphql: printSchemaWithDirectives(schema), openapi: openApiDocument(legacy) };
}
