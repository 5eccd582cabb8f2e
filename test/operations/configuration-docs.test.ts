import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingNames } from '../../src/config.js';
import { renderConfigurationDocs } from '../../src/config-docs.js';
import { errorStatus } from '../../src/errors.js';
import { projectRoot } from '../support/processes.js';

/**
 * docs/configuration.md is written from the configuration schema (npm run
 * docs:config), and the README and docs/ name no setting the gateway does not
 * read: either drifting fails here.
 */

const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');

// Environment variables of other programs than the gateway: the tests', the bench's, npm's, OpenTelemetry's.
const notGatewaySettings = /^(TEST_|BENCH_|SOAK_|OTEL_|PG|NODE_OPTIONS$|CI$|PATH$|TOKEN$|PRISMA_SCHEMA_ENGINE_BINARY$|CHECKPOINT_DISABLE$)/;

// Words of SQL the docs quote (what Prisma's statements are made of).
const sqlWords = new Set(['JSONB_BUILD_OBJECT', 'JSONB_AGG']);

// Values of the schema's enums (such as AT_LEAST), which the docs quote as an answer shows them.
const enumValues = new Set(
  [...read('schema.graphql').matchAll(/^enum \w+ \{([^}]*)\}/gm)].flatMap((block) => [...block[1]!.matchAll(/^\s*([A-Z][A-Z0-9_]*)$/gm)].map((value) => value[1]!)),
);

describe('the configuration documents', () => {
  it('docs/configuration.md is what npm run docs:config writes from the schema', () => {
    expect(read('docs/configuration.md')).toBe(renderConfigurationDocs());
  });

  it('lists every setting the gateway reads', () => {
    const documented = read('docs/configuration.md');
    for (const name of settingNames) expect(documented).toContain(`| \`${name}\` |`);
  });

  it('the README and docs/ name only settings that exist', () => {
    const files = ['README.md', ...readdirSync(path.join(projectRoot, 'docs')).map((file) => `docs/${file}`)];
    for (const file of files) {
      const named = [...read(file).matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g)].map((match) => match[1]!);
      const unknown = [...new Set(named)].filter(
        (name) => !settingNames.includes(name) && !notGatewaySettings.test(name) && !(name in errorStatus) && !sqlWords.has(name) && !enumValues.has(name),
      );
      expect(unknown, `${file} names settings the gateway does not read`).toEqual([]);
    }
  });
});
