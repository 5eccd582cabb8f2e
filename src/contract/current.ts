import { printSchemaWithDirectives } from '@graphql-tools/utils';
import release from '../../contract/release.json' with { type: 'json' };
import { GRAPHQL_PATH, OPENAPI_PATH } from '../http/routes.js';
import { openApiDocument } from '../http/transports/openapi.js';
import { DEFAULT_LEGACY_AFTER_SUNSET, DEFAULT_LEGACY_SUNSET_DATE, legacyPolicy } from '../legacy.js';
import { withContractVersion } from '../schema/contract-version.js';
import { schema } from '../schema/index.js';
import type { ContractName } from './policy.js';

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

export type Versions = Record<ContractName, string>;

/**
 * The contracts, each carrying `versions` (the schema in its description, the
 * document in info.version): by default the versions of the last releases, as
 * served; a release passes the versions it makes.
 */
export function currentContracts(
  versions: Versions = { graphql: release.graphql.version, openapi: release.openapi.version },
): Contracts {
  const legacy = legacyPolicy(
    { sunsetDate: DEFAULT_LEGACY_SUNSET_DATE, afterSunset: DEFAULT_LEGACY_AFTER_SUNSET },
    { successor: GRAPHQL_PATH, policy: OPENAPI_PATH },
  );
  return {
    graphql: printSchemaWithDirectives(withContractVersion(schema, versions.graphql)),
    openapi: openApiDocument(legacy, versions.openapi),
  };
}
