import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_DIR, type Releases } from '../../src/contract/baseline.js';
import { releaseProblems } from '../../src/contract/check.js';
import { currentContracts, type OpenApiDocument, type Versions } from '../../src/contract/current.js';
import { bumpVersion, type ContractName } from '../../src/contract/policy.js';
import { npmRun, stopAll } from '../support/processes.js';
import { editDocument, editSdl } from './fixtures.js';

/**
 * `npm run contract:release`, run as a developer would, on a copy of the
 * baseline (--dir) whose released documents are the code's own with one
 * edit: it moves each contract on its own version line, by the step its own
 * changes need (a major only when told the changes break callers), and
 * leaves the other contract, its version and its changelog as they were.
 */

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'petstore-contract-'));
});

afterAll(async () => {
  stopAll();
  await rm(scratch, { recursive: true, force: true });
});

const read = async (dir: string, file: string) => readFile(path.join(dir, file), 'utf8');
const releases = async (dir: string) => JSON.parse(await read(dir, 'release.json')) as Releases;
const today = () => new Date().toISOString().slice(0, 10);

/** The releases of contract/ (the last ones) and the next minor and major of each. */
async function versions() {
  const released = await releases(CONTRACT_DIR);
  const of = (name: ContractName) => ({
    current: released[name].version,
    minor: bumpVersion(released[name].version, 'minor'),
    major: bumpVersion(released[name].version, 'major'),
  });
  return { graphql: of('graphql'), openapi: of('openapi') };
}

interface Edits {
  graphql?: (sdl: string) => string;
  openapi?: (document: OpenApiDocument) => OpenApiDocument;
}

/**
 * A copy of contract/ whose released documents are what the code defines now
 * (with contract/'s versions), edited by `edits`: what is not edited has
 * nothing to release.
 */
async function baselineCopy(name: string, edits: Edits): Promise<string> {
  const dir = path.join(scratch, name);
  await cp(CONTRACT_DIR, dir, { recursive: true });
  const released = await releases(dir);
  const code = currentContracts({ graphql: released.graphql.version, openapi: released.openapi.version });
  const graphql = (edits.graphql ?? ((sdl) => sdl))(code.graphql);
  const openapi = (edits.openapi ?? ((document) => document))(code.openapi);
  await writeFile(path.join(dir, 'schema.graphql'), `${graphql}\n`);
  await writeFile(path.join(dir, 'openapi.json'), `${JSON.stringify(openapi, null, 2)}\n`);
  return dir;
}

const release = (dir: string, ...args: string[]) => npmRun('contract:release', ['--dir', dir, ...args], {}, 120_000);
const escaped = (version: string) => version.replaceAll('.', '\\.');
/** The section of one contract in a changelog: from its heading to the next one, or the end. */
const section = (changelog: string, heading: string) => {
  const start = changelog.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const end = changelog.indexOf('\n## ', start + heading.length);
  return changelog.slice(start, end === -1 ? undefined : end);
};
const GRAPHQL_SECTION = '## GraphQL schema';
const REST_SECTION = '## REST routes (OpenAPI document)';

/** What a folder holds of one contract, to tell that a release left it as it was. */
const snapshot = async (dir: string, name: ContractName) => ({
  release: (await releases(dir))[name],
  document: await read(dir, name === 'graphql' ? 'schema.graphql' : 'openapi.json'),
  changelog: section(await read(dir, 'CHANGELOG.md'), name === 'graphql' ? GRAPHQL_SECTION : REST_SECTION),
});

/** The schema the code defines, printed as a release writes it, carrying `versions`. */
const printed = (versions: Versions) => `${currentContracts(versions).graphql}\n`;

describe('npm run contract:release, on GraphQL changes', () => {
  it('releases a GraphQL addition as a GraphQL minor, and leaves the REST routes’ version as it was', async () => {
    // The released schema lacked Pet.categoryId, so the code's schema adds it.
    const dir = await baselineCopy('graphql-addition', {
      graphql: (sdl) => editSdl(sdl, /\n {2}"""The id of the category the animal belongs to\."""\n {2}categoryId: ID!/, ''),
    });
    const { graphql, openapi } = await versions();
    const before = { schema: await read(dir, 'schema.graphql'), rest: await snapshot(dir, 'openapi') };

    const result = await release(dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Released GraphQL ${graphql.minor} (minor; was ${graphql.current}):`);
    expect(result.stdout).toContain("[addition] GraphQL Pet.categoryId: Field 'categoryId' was added to object type 'Pet'");
    expect(result.stdout).toContain(`OpenAPI ${openapi.current} stays: nothing in it changed.`);

    expect((await releases(dir)).graphql).toEqual({ version: graphql.minor, released: today() });
    expect(await snapshot(dir, 'openapi')).toEqual(before.rest);
    expect(await read(dir, 'schema.graphql')).toBe(printed({ graphql: graphql.minor, openapi: openapi.current }));
    // The release it replaces is kept, so the check can tell the step from it.
    expect(await read(dir, `releases/schema-${graphql.current}.graphql`)).toBe(before.schema);
    const entries = section(await read(dir, 'CHANGELOG.md'), GRAPHQL_SECTION);
    expect(entries).toMatch(new RegExp(`^${GRAPHQL_SECTION}\\n\\n### ${escaped(graphql.minor)} \\(\\d{4}-\\d{2}-\\d{2}, minor\\)\\n`));
    expect(entries.indexOf(`### ${graphql.minor}`)).toBeLessThan(entries.indexOf(`### ${graphql.current}`));
    expect(entries).toMatch(/\nAdded:\n- GraphQL Pet\.categoryId: Field 'categoryId' was added to object type 'Pet'\n/);
    expect(entries).not.toContain('OpenAPI');
    expect(await releaseProblems(dir)).toEqual([]);

    const again = await release(dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `Nothing to release: the contracts are as released in GraphQL ${graphql.minor} and OpenAPI ${openapi.current}.`,
    );
  });

  it('refuses a GraphQL break unless told --breaking, then makes a new GraphQL major alone', async () => {
    // The released schema had a field the code no longer has.
    const dir = await baselineCopy('graphql-break', {
      graphql: (sdl) => editSdl(sdl, 'type Pet implements Node {\n', 'type Pet implements Node {\n  """Its nickname."""\n  nickname: String\n'),
    });
    const { graphql, openapi } = await versions();
    const rest = await snapshot(dir, 'openapi');

    const refused = await release(dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`These changes break callers of GraphQL ${graphql.current}, so its release is ${graphql.major}:`);
    expect(refused.stderr).toContain("[breaking] GraphQL Pet.nickname: Field 'nickname' was removed from object type 'Pet'");
    expect(refused.stderr).toContain('--breaking');
    expect((await releases(dir)).graphql.version).toBe(graphql.current);

    const done = await release(dir, '--breaking');
    expect(done.code, done.stderr).toBe(0);
    expect((await releases(dir)).graphql.version).toBe(graphql.major);
    expect(await snapshot(dir, 'openapi')).toEqual(rest);
    expect(section(await read(dir, 'CHANGELOG.md'), GRAPHQL_SECTION)).toMatch(
      new RegExp(`### ${escaped(graphql.major)} \\(\\d{4}-\\d{2}-\\d{2}, major\\)\\n\\nBreaking:\\n- GraphQL Pet\\.nickname: Field 'nickname' was removed`),
    );
    expect(JSON.parse(await read(dir, 'openapi.json')).info.version).toBe(openapi.current);
    expect(await releaseProblems(dir)).toEqual([]);
  });
});

describe('npm run contract:release, on REST changes', () => {
  it('releases a new route as a REST minor, leaving GraphQL as it was', async () => {
    const dir = await baselineCopy('rest-addition', {
      openapi: (document) =>
        editDocument(document, (copy) => {
          delete copy.paths['/store/orders'];
        }),
    });
    const { graphql, openapi } = await versions();
    const schema = await snapshot(dir, 'graphql');

    const result = await release(dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Released OpenAPI ${openapi.minor} (minor; was ${openapi.current}):`);
    expect(result.stdout).toContain('[addition] OpenAPI GET /store/orders');
    expect(result.stdout).toContain(`GraphQL ${graphql.current} stays: nothing in it changed.`);
    expect((await releases(dir)).openapi).toEqual({ version: openapi.minor, released: today() });
    expect(JSON.parse(await read(dir, 'openapi.json')).info.version).toBe(openapi.minor);
    expect(JSON.parse(await read(dir, `releases/openapi-${openapi.current}.json`)).info.version).toBe(openapi.current);
    expect(await snapshot(dir, 'graphql')).toEqual(schema);
    expect(section(await read(dir, 'CHANGELOG.md'), REST_SECTION)).toMatch(
      new RegExp(`^${escaped(REST_SECTION).replace(/[()]/g, '\\$&')}\\n\\n### ${escaped(openapi.minor)} \\(\\d{4}-\\d{2}-\\d{2}, minor\\)\\n\\nAdded:\\n- OpenAPI GET /store/orders`),
    );
    expect(await releaseProblems(dir)).toEqual([]);
  });

  it('refuses a REST break unless told --breaking, then makes a new REST major alone', async () => {
    // The released document had a route the code no longer answers.
    const dir = await baselineCopy('rest-break', {
      openapi: (document) =>
        editDocument(document, (copy) => {
          copy.paths['/store/inventory'] = { get: { operationId: 'inventory', responses: { '200': { description: 'Stock.' } } } };
        }),
    });
    const { graphql, openapi } = await versions();
    const schema = await snapshot(dir, 'graphql');

    const refused = await release(dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`These changes break callers of OpenAPI ${openapi.current}, so its release is ${openapi.major}:`);
    expect(refused.stderr).toContain('[breaking] OpenAPI GET /store/inventory');
    expect(refused.stderr).not.toContain(`GraphQL ${graphql.current}`);

    const done = await release(dir, '--breaking');
    expect(done.code, done.stderr).toBe(0);
    expect((await releases(dir)).openapi.version).toBe(openapi.major);
    expect(await snapshot(dir, 'graphql')).toEqual(schema);
    expect(await releaseProblems(dir)).toEqual([]);
  });
});
