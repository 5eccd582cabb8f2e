import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTRACT_DIR, type Releases } from '../../src/contract/baseline.js';
import { contractVersionIn } from '../../src/schema/contract-version.js';
import { useTestGateway } from '../support/gateway.js';
import { postGraphQL } from '../support/http.js';

/**
 * A GraphQL client reads the GraphQL contract's version over GraphQL, in the
 * schema's description (see src/schema/contract-version.ts): the version of
 * the last GraphQL release in contract/, with introspection on or off.
 */

const gateway = useTestGateway();
const closed = useTestGateway({ introspection: false });

const released = async () => JSON.parse(await readFile(path.join(CONTRACT_DIR, 'release.json'), 'utf8')) as Releases;

interface SchemaAnswer {
  data?: { __schema: { description: string | null } };
  errors?: Array<{ message: string }>;
}

describe('the GraphQL contract version', () => {
  it('is in the schema description a client reads over HTTP', async () => {
    const answer = await postGraphQL<SchemaAnswer>(gateway.baseUrl, { query: '{ __schema { description } }' });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    const description = answer.body.data!.__schema.description;
    expect(contractVersionIn(description)).toBe((await released()).graphql.version);
    expect(description).toMatch(/^The Petstore API\. Contract version: \d+\.\d+\.\d+\./);
  });

  it('is read the same with introspection off (what else of __schema is refused: test/security/exposure.test.ts)', async () => {
    const answer = await postGraphQL<SchemaAnswer>(closed.baseUrl, { query: 'query Version { __schema { description } }' });
    expect(answer.body.errors).toBeUndefined();
    expect(contractVersionIn(answer.body.data!.__schema.description)).toBe((await released()).graphql.version);
  });
});
