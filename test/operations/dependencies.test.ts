import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/processes.js';

/**
 * What package.json's `overrides` give yoga, as installed from the lockfile (docs/development.md,
 * "Where things live"): the promise helpers' 2.x under yoga, its server adapter and its fetch, and
 * 1.x for the two packages under yoga whose ES modules re-export what 2.x removed.
 */

interface Installed {
  directory: string;
  version: string;
}

/** The package a module id resolves to from `from` (a package directory), as Node's resolution finds it. */
function installed(id: string, from: string): Installed {
  let directory = path.dirname(createRequire(path.join(from, 'package.json')).resolve(id));
  for (;;) {
    const manifest = path.join(directory, 'package.json');
    try {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version: string };
      if (name === id) return { directory, version };
    } catch {
      // Not the package's root yet (a folder without a package.json, or a nested {"type": …} one).
    }
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error(`no package.json of ${id} above ${from}`);
    directory = parent;
  }
}

const major = (version: string) => Number(version.split('.')[0]);
const helpers = '@whatwg-node/promise-helpers';

describe('the promise helpers under yoga', () => {
  const yoga = installed('graphql-yoga', projectRoot);

  it.each([
    ['graphql-yoga', yoga],
    ['@whatwg-node/server', installed('@whatwg-node/server', yoga.directory)],
    ['@whatwg-node/node-fetch', installed('@whatwg-node/node-fetch', installed('@whatwg-node/fetch', yoga.directory).directory)],
  ])('%s runs on 2.x, which calls a hook straight when it returns no promise', (_name, dependent) => {
    expect(major(installed(helpers, dependent.directory).version)).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['@envelop/core', installed('@envelop/core', yoga.directory)],
    ['yoga’s @graphql-tools/utils', installed('@graphql-tools/utils', yoga.directory)],
  ])('%s keeps the 1.x whose mapMaybePromise its ES module re-exports', (_name, dependent) => {
    expect(major(installed(helpers, dependent.directory).version)).toBe(1);
  });

  it('links every ES module that re-exports from them', async () => {
    const envelop = await import('@envelop/core');
    const yogaModule = await import('graphql-yoga');
    expect(typeof envelop.mapMaybePromise).toBe('function');
    expect(typeof yogaModule.mapMaybePromise).toBe('function');
  });
});
