import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBaseline } from '../../src/contract/baseline.js';
import { contractChanges, contractReport, releaseProblems } from '../../src/contract/check.js';
import { currentContracts, type Versions } from '../../src/contract/current.js';
import { parseVersion, refused } from '../../src/contract/policy.js';
import { contractVersionIn } from '../../src/schema/contract-version.js';
import { editDocument, editSdl } from './fixtures.js';

/**
 * The contract check of `npm test`: the GraphQL schema and the OpenAPI
 * document the code defines now, compared with the releases kept in
 * contract/. A breaking change fails here with the list of what broke;
 * dangerous changes and additions not yet released are printed. And each
 * contract's release must carry a version that follows its own diff from the
 * release before it, whatever the other contract did.
 */

describe('the contracts, compared with their last releases', () => {
  it('have no breaking change the deprecation policy does not allow', async () => {
    const baseline = await readBaseline();
    const changes = await contractChanges(baseline, currentContracts());
    const report = contractReport(baseline, changes);
    if (changes.length > 0) console.info(report);
    expect(refused(changes), report).toEqual([]);
  });

  it('do not count the versions they carry as a change', async () => {
    const baseline = await readBaseline();
    const at = (versions: Versions) => currentContracts(versions);
    const [one, other] = [at({ graphql: '1.0.0', openapi: '1.0.0' }), at({ graphql: '7.1.3', openapi: '4.0.2' })];
    expect(one.graphql).not.toBe(other.graphql);
    expect(await contractChanges(one, other)).toEqual([]);
    expect(baseline.graphql).toContain('Contract version:');
  });
});

describe('the releases in contract/', () => {
  it('are one release per contract, each carried by the document it released', async () => {
    const baseline = await readBaseline();
    for (const release of Object.values(baseline.release)) {
      expect(() => parseVersion(release.version)).not.toThrow();
      expect(release.released).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(baseline.openapi.info.version).toBe(baseline.release.openapi.version);
    expect(contractVersionIn(buildSchema(baseline.graphql).description)).toBe(baseline.release.graphql.version);
    expect(baseline.openapi.openapi).toBe('3.0.3');
  });

  it('each follow their own diff from the release before them', async () => {
    expect(await releaseProblems()).toEqual([]);
  });
});

/**
 * Releases written into a folder as `npm run contract:release` keeps them:
 * for each contract, the release before (under releases/) and the last one.
 */
interface Step<Document> {
  before: { version: string; document: Document };
  after: { version: string; document: Document };
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'petstore-releases-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

const today = new Date().toISOString().slice(0, 10);
const code = (versions: Versions) => currentContracts(versions);

async function releasesIn(name: string, graphql: Step<string>, openapi: Step<object>): Promise<string> {
  const dir = path.join(scratch, name);
  await mkdir(path.join(dir, 'releases'), { recursive: true });
  await Promise.all([
    writeFile(
      path.join(dir, 'release.json'),
      JSON.stringify({
        graphql: { version: graphql.after.version, released: today },
        openapi: { version: openapi.after.version, released: today },
      }),
    ),
    writeFile(path.join(dir, 'schema.graphql'), graphql.after.document),
    writeFile(path.join(dir, 'openapi.json'), JSON.stringify(openapi.after.document)),
    writeFile(path.join(dir, 'releases', `schema-${graphql.before.version}.graphql`), graphql.before.document),
    writeFile(path.join(dir, 'releases', `openapi-${openapi.before.version}.json`), JSON.stringify(openapi.before.document)),
  ]);
  return dir;
}

/** The code's schema with a field more (Pet.nickname): the code's own removes it, a break. */
const withNickname = (sdl: string) => editSdl(sdl, 'type Pet implements Node {\n', 'type Pet implements Node {\n  """Its nickname."""\n  nickname: String\n');
/** The code's document without its orders route: the code's own adds it, an addition. */
const withoutOrders = (document: ReturnType<typeof code>['openapi']) =>
  editDocument(document, (copy) => {
    delete copy.paths['/store/orders'];
  });

/** A GraphQL break released as `graphqlVersion` after 1.0.0, a REST addition as `openapiVersion` after 1.0.0. */
function graphqlBreakAndRestAddition(graphqlVersion: string, openapiVersion: string): [Step<string>, Step<object>] {
  const before = code({ graphql: '1.0.0', openapi: '1.0.0' });
  const after = code({ graphql: graphqlVersion, openapi: openapiVersion });
  return [
    { before: { version: '1.0.0', document: withNickname(before.graphql) }, after: { version: graphqlVersion, document: after.graphql } },
    { before: { version: '1.0.0', document: withoutOrders(before.openapi) }, after: { version: openapiVersion, document: after.openapi } },
  ];
}

describe('a release whose version does not follow its own diff fails the check', () => {
  it('passes when each contract moves by the step its own changes need', async () => {
    const dir = await releasesIn('following', ...graphqlBreakAndRestAddition('2.0.0', '1.1.0'));
    expect(await releaseProblems(dir)).toEqual([]);
  });

  it('a REST major without a REST break, moved along by a GraphQL break', async () => {
    const dir = await releasesIn('rest-major', ...graphqlBreakAndRestAddition('2.0.0', '2.0.0'));
    const problems = await releaseProblems(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^OpenAPI 2\.0\.0 is a major release after 1\.0\.0, but its own changes \(none breaks a caller\) need a minor release: 1\.1\.0\.\n {2}- \[addition\] OpenAPI GET \/store\/orders/,
    );
  });

  it('a GraphQL minor with a GraphQL break', async () => {
    const dir = await releasesIn('graphql-minor', ...graphqlBreakAndRestAddition('1.1.0', '1.1.0'));
    const problems = await releaseProblems(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^GraphQL 1\.1\.0 is a minor release after 1\.0\.0, but its own changes \(some break callers\) need a major release: 2\.0\.0\./);
    expect(problems[0]).toContain("[breaking] GraphQL Pet.nickname: Field 'nickname' was removed from object type 'Pet'");
  });

  it('a version moved with nothing changed, or by more than one step', async () => {
    const [graphql, openapi] = graphqlBreakAndRestAddition('2.0.0', '1.2.0');
    const unchanged = { ...graphql, after: { version: '2.0.0', document: code({ graphql: '2.0.0', openapi: '1.2.0' }).graphql } };
    unchanged.before = { version: '1.9.0', document: code({ graphql: '1.9.0', openapi: '1.2.0' }).graphql };
    const problems = await releaseProblems(await releasesIn('steps', unchanged, openapi));
    expect(problems).toEqual([
      'GraphQL 2.0.0 is a major release after 1.9.0, but nothing in GraphQL changed: it stays 1.9.0.',
      expect.stringMatching(/^OpenAPI 1\.2\.0 does not follow 1\.0\.0 by one step, but its own changes \(none breaks a caller\) need a minor release: 1\.1\.0\./),
    ]);
  });

  it('a document that does not carry its release’s version, and a first release that is not 1.0.0', async () => {
    const [graphql, openapi] = graphqlBreakAndRestAddition('2.0.0', '1.1.0');
    const dir = await releasesIn('carried', graphql, { ...openapi, after: { ...openapi.after, document: code({ graphql: '2.0.0', openapi: '1.0.0' }).openapi } });
    expect(await releaseProblems(dir)).toEqual(['The released OpenAPI contract carries the version 1.0.0, not its release\'s 1.1.0.']);
    await rm(path.join(dir, 'releases', 'schema-1.0.0.graphql'));
    expect(await releaseProblems(dir)).toContain('GraphQL 2.0.0 is a first release (none before it is kept), which is 1.0.0.');
  });

  it('reads release.json in the shape of one release per contract only', async () => {
    const dir = await releasesIn('shape', ...graphqlBreakAndRestAddition('2.0.0', '1.1.0'));
    await writeFile(path.join(dir, 'release.json'), JSON.stringify({ version: '2.0.0', released: today }));
    await expect(releaseProblems(dir)).rejects.toThrow(/one entry per contract/);
  });
});
