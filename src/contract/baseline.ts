import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Contracts, OpenApiDocument } from './current.js';
import { compareVersions, type ContractName, contractNames, parseVersion } from './policy.js';

/**
 * The released contracts kept in the repository (contract/ at the project's
 * root): what callers were last promised, and the version each contract was
 * released as, on its own version line. `npm run contract:release` is the
 * only writer; the contract check reads it.
 */

/** Where the baseline lives unless a command is told another folder (tests use copies). */
export const CONTRACT_DIR = path.resolve(import.meta.dirname, '../../contract');

export const baselineFiles = {
  release: 'release.json',
  graphql: 'schema.graphql',
  openapi: 'openapi.json',
  changelog: 'CHANGELOG.md',
  /** The releases before the last one, named by contract and version, so each version step can be checked. */
  earlier: 'releases',
} as const;

export interface Release {
  /** Semantic version of this contract alone. */
  version: string;
  /** The day it was released (UTC), YYYY-MM-DD. */
  released: string;
}

/** The last release of each contract. */
export type Releases = Record<ContractName, Release>;

export interface Baseline extends Contracts {
  release: Releases;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** release.json, refused with the reason when it is not one release per contract. */
function parseReleases(text: string): Releases {
  const json = JSON.parse(text) as Partial<Record<ContractName, Partial<Release>>>;
  for (const name of contractNames) {
    const entry = json[name];
    if (typeof entry?.version !== 'string' || typeof entry.released !== 'string' || !DAY.test(entry.released)) {
      throw new Error(
        `${baselineFiles.release} needs "${name}": { "version": "X.Y.Z", "released": "YYYY-MM-DD" }, one entry per contract.`,
      );
    }
    parseVersion(entry.version);
  }
  return json as Releases;
}

export async function readBaseline(dir = CONTRACT_DIR): Promise<Baseline> {
  const read = (file: string) => readFile(path.join(dir, file), 'utf8');
  const [release, graphql, openapi] = await Promise.all([
    read(baselineFiles.release),
    read(baselineFiles.graphql),
    read(baselineFiles.openapi),
  ]);
  return {
    release: parseReleases(release),
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

/** The name of an earlier release's file under releases/: `schema-2.0.0.graphql`, `openapi-1.0.0.json`. */
const earlierFile: Record<ContractName, { prefix: string; suffix: string }> = {
  graphql: { prefix: 'schema-', suffix: '.graphql' },
  openapi: { prefix: 'openapi-', suffix: '.json' },
};
const earlierName = (name: ContractName, version: string) => `${earlierFile[name].prefix}${version}${earlierFile[name].suffix}`;

export interface EarlierRelease<Document> {
  version: string;
  document: Document;
}

/** The release of a contract just before `version`, if one is kept (none before a first release). */
export async function releaseBefore<Name extends ContractName>(
  name: Name,
  version: string,
  dir = CONTRACT_DIR,
): Promise<EarlierRelease<Contracts[Name]> | undefined> {
  const files = await readdir(path.join(dir, baselineFiles.earlier)).catch(() => [] as string[]);
  const { prefix, suffix } = earlierFile[name];
  const versions = files
    .filter((file) => file.startsWith(prefix) && file.endsWith(suffix))
    .map((file) => file.slice(prefix.length, -suffix.length))
    .filter((candidate) => /^\d+\.\d+\.\d+$/.test(candidate) && compareVersions(candidate, version) < 0)
    .sort(compareVersions);
  const previous = versions.at(-1);
  if (previous === undefined) return undefined;
  const text = await readFile(path.join(dir, baselineFiles.earlier, earlierName(name, previous)), 'utf8');
  return { version: previous, document: (name === 'openapi' ? JSON.parse(text) : text) as Contracts[Name] };
}

const CHANGELOG_HEAD = [
  '# Contract releases',
  '',
  'Written by `npm run contract:release`, the newest first. Each contract has a version line of its own, moved',
  'only by its own changes: a GraphQL release leaves the REST routes\' version as it is, and the other way round.',
].join('\n');

/** The changelog's section of each contract, its releases under it. */
export const changelogSections: Record<ContractName, string> = {
  graphql: '## GraphQL schema',
  openapi: '## REST routes (OpenAPI document)',
};

/** `changelog` with `entry` (a `### version` heading and its list) first in the section of `name`. */
export function addChangelogEntry(changelog: string, name: ContractName, entry: string): string {
  const parts = changelog.split(/\n(?=## )/).map((part) => part.trim());
  for (const other of contractNames) {
    if (!parts.some((part) => part.split('\n')[0] === changelogSections[other])) parts.push(changelogSections[other]);
  }
  const index = parts.findIndex((part) => part.split('\n')[0] === changelogSections[name]);
  const [heading = '', ...entries] = parts[index]!.split(/\n(?=### )/).map((part) => part.trim());
  parts[index] = [heading, entry.trim(), ...entries].join('\n\n');
  return `${parts.join('\n\n')}\n`;
}

/**
 * Writes a new release: release.json, and for each contract in `notes` (the
 * ones that moved) its document, the one it replaces kept under releases/,
 * and its entry in CHANGELOG.md. The documents carry their versions already
 * (see currentContracts); the other contract's files are left as they are.
 */
export async function writeBaseline(
  next: Baseline,
  notes: Partial<Record<ContractName, string>>,
  dir = CONTRACT_DIR,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const previous = (await hasBaseline(dir)) ? parseReleases(await readFile(path.join(dir, baselineFiles.release), 'utf8')) : undefined;
  let changelog = await readFile(path.join(dir, baselineFiles.changelog), 'utf8').catch(() => CHANGELOG_HEAD);
  const texts: Record<ContractName, string> = {
    graphql: next.graphql.endsWith('\n') ? next.graphql : `${next.graphql}\n`,
    openapi: `${JSON.stringify(next.openapi, null, 2)}\n`,
  };
  for (const name of contractNames) {
    const entry = notes[name];
    if (entry === undefined) continue;
    if (previous) {
      await mkdir(path.join(dir, baselineFiles.earlier), { recursive: true });
      await copyFile(path.join(dir, baselineFiles[name]), path.join(dir, baselineFiles.earlier, earlierName(name, previous[name].version)));
    }
    await writeFile(path.join(dir, baselineFiles[name]), texts[name]);
    changelog = addChangelogEntry(changelog, name, entry);
  }
  await Promise.all([
    writeFile(path.join(dir, baselineFiles.release), `${JSON.stringify(next.release, null, 2)}\n`),
    writeFile(path.join(dir, baselineFiles.changelog), changelog),
  ]);
}
