import { describe, expect, it } from 'vitest';
import { type Baseline, readBaseline } from '../../src/contract/baseline.js';
import { contractChanges, contractReport, requiredBumps } from '../../src/contract/check.js';
import type { Contracts } from '../../src/contract/current.js';
import { bumpVersion, type ContractChange, refused, requiredBump } from '../../src/contract/policy.js';
import { editDocument, editSdl } from './fixtures.js';

/**
 * Each kind of breaking change, made in a fixture (the released baseline with
 * one edit), is caught and named; what the policy lets through (an element
 * deprecated in the baseline whose sunset date has passed, an element marked
 * BETA or EXPERIMENTAL) passes; dangerous changes are listed, not refused.
 */

const baseline: Baseline = await readBaseline();
const released: Contracts = { graphql: baseline.graphql, openapi: baseline.openapi };

/** The changes from the baseline to `current`, which keeps the baseline's other contract. */
const changesTo = (current: Partial<Contracts>, from: Contracts = released) => contractChanges(from, { ...released, ...current });
const summary = (changes: readonly ContractChange[]) => changes.map((change) => `${change.kind} ${change.where}`);

describe('a breaking change to the GraphQL schema fails the check', () => {
  it('a removed field', async () => {
    const graphql = editSdl(released.graphql, /\n {2}"""The animal's name\."""\n {2}name: String!/, '');
    const failing = refused(await changesTo({ graphql }));
    expect(summary(failing)).toEqual(['breaking Pet.name']);
    expect(failing[0]!.message).toMatch(/Field 'name' .*removed/);
  });

  it('a removed enum value', async () => {
    const graphql = editSdl(released.graphql, /\n {2}"""Out of stock with no open order\."""\n {2}SOLD/, '');
    expect(summary(refused(await changesTo({ graphql })))).toEqual(['breaking PetStatus.SOLD']);
  });

  it('a new required argument', async () => {
    const graphql = editSdl(released.graphql, '    """The order of the list."""\n    orderBy: PetOrder\n', '    orderBy: PetOrder\n    shop: ID!\n');
    const failing = refused(await changesTo({ graphql }));
    expect(summary(failing)).toEqual(['breaking Query.pets.shop']);
    expect(failing[0]!.message).toContain("Argument 'shop: ID!' added");
  });

  it('a field whose type changed, and a renamed type', async () => {
    const graphql = editSdl(
      editSdl(released.graphql, /type PetConnection \{/, 'type PetsConnection {'),
      /\): PetConnection!/g,
      '): PetsConnection!',
    );
    const failing = summary(refused(await changesTo({ graphql })));
    expect(failing).toContain('breaking Query.pets');
    expect(failing).toContain('breaking PetConnection');
  });

  it('is reported as a list naming each change and what to do', async () => {
    const graphql = editSdl(released.graphql, /\n {2}"""Out of stock with no open order\."""\n {2}SOLD/, '');
    const report = contractReport(baseline, await changesTo({ graphql }));
    expect(report).toContain('Breaking changes, refused (1):');
    expect(report).toMatch(/- GraphQL PetStatus\.SOLD: Enum value 'SOLD' was removed from enum 'PetStatus'/);
    expect(report).toContain('npm run contract:release -- --breaking');
  });
});

describe('a breaking change to the OpenAPI document fails the check', () => {
  it('a changed type of a response field', async () => {
    const openapi = editDocument(released.openapi, (document) => {
      document.components.schemas.Order.properties.complete = { type: 'string', description: 'yes or no' };
    });
    const failing = refused(await changesTo({ openapi }));
    // Every operation answering with an Order: GET and HEAD document the same body.
    expect(summary(failing)).toEqual([
      'breaking GET /store/orders responses/200/content/application/json/schema/items/properties/complete/type',
    ]);
  });

  it('a removed response field', async () => {
    const openapi = editDocument(released.openapi, (document) => {
      delete document.components.schemas.Pet.properties.categoryId;
      document.components.schemas.Pet.required = ['id', 'name'];
    });
    const failing = summary(refused(await changesTo({ openapi })));
    expect(failing).toContain('breaking GET /pets/{petId} responses/200/content/application/json/schema/properties/categoryId');
  });

  it('a new required query parameter, and a removed route', async () => {
    const withParameter = editDocument(released.openapi, (document) => {
      document.paths['/store/orders'].get.parameters.push({ name: 'shop', in: 'query', required: true, schema: { type: 'string' } });
    });
    expect(summary(refused(await changesTo({ openapi: withParameter })))).toEqual(['breaking GET /store/orders parameters/4']);
    const withoutRoute = editDocument(released.openapi, (document) => {
      delete document.paths['/pets/{petId}'];
    });
    expect(summary(refused(await changesTo({ openapi: withoutRoute })))).toEqual([
      'breaking GET /pets/{petId}',
      'breaking HEAD /pets/{petId}',
    ]);
  });
});

describe('what the deprecation policy lets through', () => {
  it('removing getPetById, deprecated in the baseline, passes once its sunset date has passed', async () => {
    const pastSunset = editSdl(released.graphql, 'removed on 2027-06-30 (sunset date)', 'removed on 2024-01-31 (sunset date)');
    const withoutIt = editSdl(released.graphql, /\n {2}"""One pet by its id: the legacy lookup[^\n]*\n {2}getPetById\([^)]*\): Pet @deprecated\([^\n]*/, '');
    const changes = await changesTo({ graphql: withoutIt }, { ...released, graphql: pastSunset });
    expect(refused(changes)).toEqual([]);
    expect(changes).toContainEqual(
      expect.objectContaining({
        kind: 'breaking',
        where: 'Query.getPetById',
        exemption: { reason: 'retired', element: 'Query.getPetById', sunsetDate: '2024-01-31' },
      }),
    );
    // Still a major release: callers that never moved do break.
    expect(requiredBump(changes)).toBe('major');
  });

  it('the same removal before the sunset date fails', async () => {
    const withoutIt = editSdl(released.graphql, /\n {2}"""One pet by its id: the legacy lookup[^\n]*\n {2}getPetById\([^)]*\): Pet @deprecated\([^\n]*/, '');
    expect(summary(refused(await changesTo({ graphql: withoutIt })))).toEqual(['breaking Query.getPetById']);
  });

  it('removing GET /pets/{petId}, deprecated with x-sunset, passes once its sunset date has passed', async () => {
    const pastSunset = editDocument(released.openapi, (document) => {
      for (const method of ['get', 'head']) document.paths['/pets/{petId}'][method]['x-sunset'] = '2024-01-31';
    });
    const withoutRoute = editDocument(released.openapi, (document) => {
      delete document.paths['/pets/{petId}'];
    });
    const changes = await changesTo({ openapi: withoutRoute }, { ...released, openapi: pastSunset });
    expect(refused(changes)).toEqual([]);
    expect(changes.filter((change) => change.exemption?.reason === 'retired').map((change) => change.where)).toEqual([
      'GET /pets/{petId}',
      'HEAD /pets/{petId}',
    ]);
  });

  it('a field marked BETA may break, and so may the type only it leads to', async () => {
    const graphql = editSdl(
      editSdl(released.graphql, /\n {2}"""\n {2}BETA: Inventory entries and stock per status[^"]*"""\n {2}inventorySummary[^\n]*/, ''),
      /"""Inventory entries and their stock in one status\."""\ntype InventoryStatusTotal \{[^}]*\}\n\n/,
      '',
    );
    const changes = await changesTo({ graphql });
    expect(refused(changes)).toEqual([]);
    expect(changes.filter((change) => change.kind === 'breaking').map((change) => [change.where, change.exemption])).toEqual([
      ['InventoryStatusTotal', { reason: 'unstable', element: 'Query.inventorySummary', level: 'BETA' }],
      ['Query.inventorySummary', { reason: 'unstable', element: 'Query.inventorySummary', level: 'BETA' }],
    ]);
    expect(requiredBump(changes)).toBe('minor');
  });

  it('an operation marked x-stability beta may break', async () => {
    const beta = editDocument(released.openapi, (document) => {
      for (const method of ['get', 'head']) document.paths['/store/orders'][method]['x-stability'] = 'beta';
    });
    const withoutFilter = editDocument(beta, (document) => {
      for (const method of ['get', 'head']) document.paths['/store/orders'][method].parameters.splice(0, 1);
    });
    const changes = await changesTo({ openapi: withoutFilter }, { ...released, openapi: beta });
    expect(refused(changes)).toEqual([]);
    expect(changes.filter((change) => change.kind === 'breaking').map((change) => change.exemption)).toContainEqual({
      reason: 'unstable',
      element: 'GET /store/orders',
      level: 'beta',
    });
    // The same change to the stable operation fails.
    const stableWithoutFilter = editDocument(released.openapi, (document) => {
      document.paths['/store/orders'].get.parameters.splice(0, 1);
    });
    expect(summary(refused(await changesTo({ openapi: stableWithoutFilter })))).toEqual(['breaking GET /store/orders parameters/0']);
  });

  it('a new deprecation must name a sunset date at least 180 days ahead', async () => {
    const deprecate = (reason: string) =>
      editSdl(released.graphql, /(\n {2}pet\(\n[^)]*\): Pet)\n/, `$1 @deprecated(reason: "${reason}")\n`);
    const tooSoon = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const farEnough = new Date(Date.now() + 200 * 86_400_000).toISOString().slice(0, 10);
    expect(refused(await changesTo({ graphql: deprecate('Use something else.') }))[0]?.message).toMatch(
      /Query\.pet is newly deprecated without a sunset date/,
    );
    expect(refused(await changesTo({ graphql: deprecate(`Removed on ${tooSoon}.`) }))[0]?.message).toMatch(
      /less than 180 days away/,
    );
    const dated = await changesTo({ graphql: deprecate(`Removed on ${farEnough}.`) });
    expect(refused(dated)).toEqual([]);
    expect(dated.length).toBeGreaterThan(0);
    for (const change of dated) expect(`${change.kind} ${change.where}`).toMatch(/^addition Query\.pet\.@deprecated/);
  });
});

describe('dangerous changes and additions', () => {
  it('are listed without failing: a new enum value, a new optional argument, a new route', async () => {
    const graphql = editSdl(
      editSdl(released.graphql, '  SOLD\n}', '  SOLD\n  """Gone to a new home."""\n  ADOPTED\n}'),
      '    orderBy: PetOrder\n',
      '    orderBy: PetOrder\n    """Only these."""\n    nameStartsWith: String\n',
    );
    const openapi = editDocument(released.openapi, (document) => {
      document.paths['/store/inventory'] = { get: { operationId: 'inventory', responses: { '200': { description: 'Stock.' } } } };
    });
    const changes = await changesTo({ graphql, openapi });
    expect(refused(changes)).toEqual([]);
    expect(summary(changes.filter((change) => change.kind === 'dangerous'))).toEqual(['dangerous PetStatus.ADOPTED', 'dangerous Query.pets.nameStartsWith']);
    expect(summary(changes)).toContain('addition GET /store/inventory');
    const report = contractReport(baseline, changes);
    expect(report).toContain('Dangerous changes (2):');
    const next = (name: 'graphql' | 'openapi') => bumpVersion(baseline.release[name].version, 'minor');
    expect(report).toContain(`\`npm run contract:release\` would release GraphQL ${next('graphql')} (minor) and OpenAPI ${next('openapi')} (minor).`);
    expect(requiredBump(changes)).toBe('minor');
  });

  it('a change to one contract is for its own release only', async () => {
    const openapi = editDocument(released.openapi, (document) => {
      delete document.paths['/store/orders'];
    });
    const changes = await changesTo({ openapi });
    expect(requiredBumps(changes)).toEqual({ graphql: 'none', openapi: 'major' });
    const report = contractReport(baseline, changes);
    expect(report).toContain(`Contracts compared with their releases in contract/: GraphQL ${baseline.release.graphql.version} and OpenAPI ${baseline.release.openapi.version}.`);
  });

  it('a new server is an addition; a server moved elsewhere is dangerous; its description is a text', async () => {
    const added = editDocument(released.openapi, (document) => {
      document.servers.push({ url: 'https://petstore.example', description: 'The public address.' });
    });
    expect(summary(await changesTo({ openapi: added }))).toEqual(['addition servers/1']);
    const moved = editDocument(released.openapi, (document) => {
      document.servers[0].url = 'https://petstore.example';
    });
    expect(summary(await changesTo({ openapi: moved }))).toEqual(['dangerous servers/0/url']);
    const described = editDocument(released.openapi, (document) => {
      document.servers[0].description = 'This gateway.';
    });
    expect(summary(await changesTo({ openapi: described }))).toEqual(['annotation servers/0/description']);
  });

  it('a text alone makes a patch; nothing at all makes no release', async () => {
    const graphql = editSdl(released.graphql, '"""The animal\'s name."""', '"""What the animal is called."""');
    const texts = await changesTo({ graphql });
    expect(summary(texts)).toEqual(['annotation Pet.name']);
    expect(requiredBump(texts)).toBe('patch');
    expect(await changesTo({})).toEqual([]);
  });
});
