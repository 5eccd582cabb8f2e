import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * The example's typed documents and its trusted-documents manifest (src/gql/persisted-documents.json),
 * from the gateway's printed schema: `npx graphql-codegen --config examples/web/codegen.ts`.
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['examples/web/src/**/*.ts', '!examples/web/src/gql/**'],
  emitLegacyCommonJSImports: false,
  generates: {
    'examples/web/src/gql/': {
      preset: 'client',
      config: { scalars: { DateTime: 'string', ID: 'string' }, enumsAsTypes: true, useTypeImports: true },
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
    },
  },
};

export default config;
