import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Contracts, OpenApiDocument } from './current.js';

/**
 * The released contracts kept in the repository (contract/ at the project's
 * root): what callers were last promised, and the version it was released as.
 * `npm run contract:release` is the only writer; the contract check reads it.
 */

/** Where the baseline lives unless a command is told another folder (tests use copies). */
export const CONTRACT_DIR = path.resolve(import.meta.dirname, '../../contract');

export const baselineFiles = {
  release: 'release.json',
  graphql: 'schema.graphql',
  openapi: 'openapi.json',
  changelog: 'CHANGELOG.md',
} as const;

export interface Release {
  /** Semantic version of both contracts together. */
  version: string;
  /** The day it was released (UTC), YYYY-MM-DD. */
  released: string;
}

export interface Baseline extends Contracts {
  release: Release;
}

export async function readBaseline(dir = CONTRACT_DIR): Promise<Baseline> {
  const read = (file: string) => readFile(path.join(dir, file), 'utf8');
  const [release, graphql, openapi] = await Promise.all([
    read(baselineFiles.release),
    read(baselineFiles.graphql),
    read(baselineFiles.openapi),
  ]);
  return {
    release: JSON.parse(release) as Release,
    graphql,
    openapi: JSON.parse(openapi) as OpenApiDocument,
  };
}

/** Whether the folder holds a baseline at all (the first release makes one). */
export async function hasBaseline(dir = CONTRACT_DIR): Promise<boolean> {
  return readFile(path.join(dir, baselineFiles.release), 'utf8').then(
    () => true,
    () => false,
  );
}

/** Writes a new baseline; the OpenAPI document's info.version becomes the release's version. */
export async function writeBaseline(baseline: Baseline, changelogEntry: string, dir = CONTRACT_DIR): Promise<void> {
  await mkdir(dir, { recursive: true });
  const openapi = { ...baseline.openapi, info: { ...baseline.openapi.info, version: baseline.release.version } };
  const previousChangelog = await readFile(path.join(dir, baselineFiles.changelog), 'utf8').catch(
    () => '# Contract releases\n\nWritten by `npm run contract:release`; the newest first.\n',
  );
  const [heading = '', ...older] = previousChangelog.split(/\n(?=## )/);
  await Promise.all([
    writeFile(path.join(dir, baselineFiles.release), `${JSON.stringify(baseline.release, null, 2)}\n`),
    writeFile(path.join(dir, baselineFiles.graphql), baseline.graphql.endsWith('\n') ? baseline.graphql : `${baseline.graphql}\n`),
    writeFile(path.join(dir, baselineFiles.openapi), `${JSON.stringify(openapi, null, 2)}\n`),
    writeFile(
      path.join(dir, baselineFiles.changelog),
      `${[heading, changelogEntry, ...older].map((part) => part.trim()).join('\n\n')}\n`,
    ),
  ]);
}
