import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { schema } from './src/schema/index.js';

/**
 * `npm run schema:print`: prints the schema built in code to schema.graphql
 * (with the @stability directives), and generates typed documents for the
 * GraphQL documents under test/documents/, as a frontend app would.
 */
const config: CodegenConfig = {
  schema: printSchemaWithDirectives(schema),
  documents: ['test/documents/**/*.graphql'],
  // ESM: generated imports carry their .js extension.
  emitLegacyCommonJSImports: false,
  generates: {
    'schema.graphql': {
      plugins: ['schema-ast'],
      config: { includeDirectives: true },
    },
    'test/generated/': {
      preset: 'client',
      config: {
        scalars: { DateTime: 'string', ID: 'string' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
      // persisted-documents.json: the trusted-documents manifest a frontend ships with its build
      // (sha256 of each document's text -> the text), as TRUSTED_DOCUMENTS reads it.
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
    },
  },
};

export default config;
