import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../support/processes.js';

/**
 * `npm ci` as a fresh clone runs it: npm on the system's Node, which may be older than the Node 24
 * the project installs into node_modules/.bin and runs on. npm checks each package's engines
 * against its own Node; the install must not answer that with a wall of EBADENGINE warnings.
 *
 * A dry run on the project's package files in a folder of their own: npm works out and checks the
 * whole tree from the lockfile, as a real install does, but downloads and writes nothing.
 */

const exec = promisify(execFile);

/**
 * The environment of a shell on this machine: no npm settings passed down from an `npm test`
 * (they would carry .npmrc's own into the run under test), no node_modules/.bin on PATH.
 */
function systemEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const paths = (process.env.PATH ?? '').split(path.delimiter).filter((entry) => !entry.endsWith(path.join('node_modules', '.bin')));
  return { ...env, PATH: paths.join(path.delimiter) };
}

const systemNode = await exec('node', ['--version'], { env: systemEnv() }).then(
  ({ stdout }) => stdout.trim(),
  () => undefined,
);
const olderNode = systemNode !== undefined && Number(/^v(\d+)/.exec(systemNode)?.[1]) < 24;
if (!olderNode) console.warn(`SKIPPED the install on an older Node: the system's Node is ${systemNode ?? 'missing'}.`);

const folders: string[] = [];
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

describe.skipIf(!olderNode)(`npm ci with npm on the system's Node (${systemNode})`, () => {
  it('checks the whole tree and prints no warning', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'petstore-install-'));
    folders.push(folder);
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
      if (existsSync(path.join(projectRoot, file))) await copyFile(path.join(projectRoot, file), path.join(folder, file));
    }
    const { stdout, stderr } = await exec('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: folder,
      env: systemEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(stdout).toMatch(/^added \d+ packages/m);
    expect(`${stdout}${stderr}`).not.toMatch(/EBADENGINE|npm warn/i);
  }, 120_000);

  it('ends with one line that says why npm says nothing about engines', async () => {
    const note = (npmNode: string) =>
      exec(process.execPath, [path.join(projectRoot, 'src/cli/install-note.mjs')], {
        env: { ...systemEnv(), npm_config_user_agent: `npm/11.0.0 node/${npmNode} linux x64 workspaces/false` },
      });
    const lines = (await note(systemNode!)).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    for (const part of [`Node ${systemNode}`, `Node ${process.version}`, 'loglevel=error in .npmrc']) expect(lines[0]).toContain(part);
    // npm on the project's own Node checks engines truly: nothing to explain.
    expect((await note(process.version)).stdout).toBe('');
  });
});
