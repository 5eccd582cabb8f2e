import spectralCore, { type ISpectralDiagnostic } from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { beforeAll, describe, expect, it } from 'vitest';
import { readBaseline } from '../../src/contract/baseline.js';
import { withStability } from '../../src/http/transports/openapi.js';
import { useTestGateway } from '../support/gateway.js';
import type { OpenApiJson } from './fixtures.js';

/**
 * The OpenAPI document as GET /openapi.json serves it: clean under Spectral's
 * `oas` ruleset (what `spectral lint` runs with `extends: spectral:oas`),
 * listing its servers, its version the REST routes' released one, and marking stability
 * as the GraphQL schema does.
 */

const { Spectral, Document } = spectralCore;
const gateway = useTestGateway();

let served: OpenApiJson;
let text: string;

beforeAll(async () => {
  const response = await fetch(`${gateway.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  text = await response.text();
  served = JSON.parse(text) as OpenApiJson;
});

async function lint(documentText: string): Promise<ISpectralDiagnostic[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [oas] } as never);
  return spectral.run(new Document(documentText, spectralParsers.Json, 'openapi.json'));
}

const summary = (results: ISpectralDiagnostic[]) => results.map((result) => `${result.code} ${result.path.join('.')}: ${result.message}`);

describe('GET /openapi.json under Spectral’s oas ruleset', () => {
  it('has no error and no warning', async () => {
    const results = await lint(text);
    // Severity 0 is an error, 1 a warning (2 information, 3 a hint).
    expect(summary(results.filter((result) => result.severity <= 1))).toEqual([]);
  });

  it('would be caught without servers, or with an unused component', async () => {
    const withoutServers = { ...served, servers: undefined };
    expect(summary(await lint(JSON.stringify(withoutServers)))).toContainEqual(expect.stringMatching(/^oas3-api-servers/));
    const { 'x-unlisted-requests': _unlisted, ...unreferenced } = served;
    expect(summary(await lint(JSON.stringify(unreferenced)))).toContainEqual(
      expect.stringMatching(/^oas3-unused-component components\.responses\.NotFound/),
    );
  });
});

describe('the served document', () => {
  it('lists its server, and carries the version of the REST routes\' last release in contract/', async () => {
    expect(served.servers).toEqual([{ url: '/', description: 'The gateway serving this document.' }]);
    expect(served.info.version).toBe((await readBaseline()).release.openapi.version);
  });

  it('marks an operation that is not stable with x-stability and its description, and no stable one', () => {
    const operations = Object.values(served.paths as Record<string, Record<string, OpenApiJson>>).flatMap((pathItem) =>
      Object.entries(pathItem).filter(([method]) => method !== 'parameters').map(([, operation]) => operation),
    );
    expect(operations.length).toBe(4);
    // Both routes are the original API's, stable (GET /pets/{petId} is deprecated, which is another matter).
    for (const operation of operations) expect(operation).not.toHaveProperty('x-stability');
    expect(served.info.description).toContain('`x-stability`');

    const marked = withStability({ operationId: 'listOrders', description: 'List the orders.' }, 'BETA');
    expect(marked).toEqual({ operationId: 'listOrders', description: 'BETA: List the orders.', 'x-stability': 'beta' });
    expect(withStability({ description: 'Stable.' }, undefined)).toEqual({ description: 'Stable.' });
  });
});
