import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { readBaseline } from '../../src/contract/baseline.js';
import { contractChanges, contractReport } from '../../src/contract/check.js';
import { currentContracts } from '../../src/contract/current.js';
import { parseVersion, refused } from '../../src/contract/policy.js';

/**
 * The contract check of `npm test`: the GraphQL schema and the OpenAPI
 * document the code defines now, compared with the release kept in contract/.
 * A breaking change fails here with the list of what broke; dangerous changes
 * and additions not yet released are printed.
 */

describe('the contracts, compared with the last release', () => {
  it('have no breaking change the deprecation policy does not allow', async () => {
    const baseline = await readBaseline();
    const changes = await contractChanges(baseline, currentContracts());
    const report = contractReport(baseline, changes);
    if (changes.length > 0) console.info(report);
    expect(refused(changes), report).toEqual([]);
  });
});

describe('the release in contract/', () => {
  it('is one version for both contracts, written in the OpenAPI document it released', async () => {
    const baseline = await readBaseline();
    expect(() => parseVersion(baseline.release.version)).not.toThrow();
    expect(baseline.release.released).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(baseline.openapi.info.version).toBe(baseline.release.version);
    expect(baseline.openapi.openapi).toBe('3.0.3');
    expect(() => buildSchema(baseline.graphql)).not.toThrow();
  });
});
