import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_DIR } from '../../src/contract/baseline.js';
import { npmRun, projectRoot, stopAll } from '../support/processes.js';
import { editSdl } from './fixtures.js';

/**
 * `npm run contract:release`, run as a developer would, on a copy of the
 * baseline (--dir) made to differ from the code: it moves the baseline and
 * the version together, a major only when told the changes break callers.
 */

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'petstore-contract-'));
});

afterAll(async () => {
  stopAll();
  await rm(scratch, { recursive: true, force: true });
});

/** A copy of contract/ whose released schema is `edit` of the real one. */
async function baselineCopy(name: string, edit: (sdl: string) => string): Promise<string> {
  const dir = path.join(scratch, name);
  await cp(CONTRACT_DIR, dir, { recursive: true });
  const file = path.join(dir, 'schema.graphql');
  await writeFile(file, edit(await readFile(file, 'utf8')));
  return dir;
}

const release = (dir: string, ...args: string[]) => npmRun('contract:release', ['--dir', dir, ...args], {}, 120_000);
const read = async (dir: string, file: string) => readFile(path.join(dir, file), 'utf8');
const releasedVersion = async (dir: string) => JSON.parse(await read(dir, 'release.json')).version as string;
/** The version of contract/ (the last release) and the next minor and major after it. */
const versions = async () => {
  const current = await releasedVersion(CONTRACT_DIR);
  const [major = 0, minor = 0] = current.split('.').map(Number);
  return { current, minor: `${major}.${minor + 1}.0`, major: `${major + 1}.0.0` };
};
const escaped = (version: string) => version.replaceAll('.', '\\.');

describe('npm run contract:release', () => {
  it('releases an addition as a minor version, baseline and version together', async () => {
    // The released schema lacked Pet.categoryId, so the code's schema adds it.
    const dir = await baselineCopy('addition', (sdl) =>
      editSdl(sdl, /\n {2}"""The id of the category the animal belongs to\."""\n {2}categoryId: ID!/, ''),
    );
    const { current, minor } = await versions();
    const released = await releasedVersion(dir);
    const result = await release(dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Released ${minor} (minor; was ${current})`);
    expect(result.stdout).toContain("[addition] GraphQL Pet.categoryId: Field 'categoryId' was added to object type 'Pet'");
    expect(released).toBe(current);
    expect(await releasedVersion(dir)).toBe(minor);
    expect(JSON.parse(await read(dir, 'openapi.json')).info.version).toBe(minor);
    expect(await read(dir, 'schema.graphql')).toBe(await read(projectRoot, 'schema.graphql').then((text) => (text.endsWith('\n') ? text : `${text}\n`)));
    const changelog = await read(dir, 'CHANGELOG.md');
    expect(changelog.indexOf(`## ${minor}`)).toBeLessThan(changelog.indexOf(`## ${current}`));
    const entry = changelog.slice(changelog.indexOf(`## ${minor}`), changelog.indexOf(`## ${current}`));
    expect(entry).toMatch(new RegExp(`^## ${escaped(minor)} \\(\\d{4}-\\d{2}-\\d{2}, minor\\)\\n`));
    // With whatever else is not released yet: the entry lists everything the release moves.
    expect(entry).toMatch(/\nAdded:\n(- .*\n)*- GraphQL Pet\.categoryId: Field 'categoryId' was added to object type 'Pet'\n/);
    expect(entry).not.toContain('Breaking:');

    const again = await release(dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Nothing to release: both contracts are as released in ${minor}.`);
  });

  it('refuses a breaking release unless told --breaking, then makes a new major', async () => {
    // The released schema had a field the code no longer has.
    const { current, major } = await versions();
    const dir = await baselineCopy('breaking', (sdl) => editSdl(sdl, 'type Pet {\n', 'type Pet {\n  """Its nickname."""\n  nickname: String\n'));
    const refused = await release(dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`These changes break callers of ${current}, so the release is ${major}:`);
    expect(refused.stderr).toContain("[breaking] GraphQL Pet.nickname: Field 'nickname' was removed from object type 'Pet'");
    expect(refused.stderr).toContain('--breaking');
    expect(await releasedVersion(dir)).toBe(current);

    const small = `${current.split('.')[0]}.5.0`;
    const tooSmall = await release(dir, '--breaking', '--version', small);
    expect(tooSmall.code).toBe(1);
    expect(tooSmall.stderr).toContain(`${small} is too small: these changes need a major release, ${major} or later.`);

    const done = await release(dir, '--breaking');
    expect(done.code, done.stderr).toBe(0);
    expect(await releasedVersion(dir)).toBe(major);
    expect(await read(dir, 'CHANGELOG.md')).toMatch(
      new RegExp(`## ${escaped(major)} \\(\\d{4}-\\d{2}-\\d{2}, major\\)\\n\\nBreaking:\\n- GraphQL Pet\\.nickname: Field 'nickname' was removed`),
    );
  });
});
