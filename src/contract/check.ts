import { buildSchema } from 'graphql';
import { contractVersionIn } from '../schema/contract-version.js';
import { type Baseline, CONTRACT_DIR, readBaseline, releaseBefore } from './baseline.js';
import type { Contracts, OpenApiDocument } from './current.js';
import { graphqlChanges } from './graphql-changes.js';
import { openApiChanges } from './openapi-changes.js';
import {
  type Bump,
  bumpVersion,
  type ContractChange,
  type ContractName,
  contractLabels,
  contractNames,
  describeChange,
  refused,
  requiredBump,
  versionStep,
} from './policy.js';

/**
 * The changes to one contract between two of its documents, judged by the
 * policy. The version each document carries (the OpenAPI document's
 * info.version, the schema's description) is the release's own number, not
 * part of what is compared: a release moves it. (GraphQL Inspector does not
 * compare the schema's description; a test keeps it so.)
 */
export async function changesOf<Name extends ContractName>(
  name: Name,
  before: Contracts[Name],
  after: Contracts[Name],
  now = Date.now(),
): Promise<ContractChange[]> {
  if (name === 'graphql') return graphqlChanges(before as string, after as string, now);
  const [released, current] = [before as OpenApiDocument, after as OpenApiDocument];
  return openApiChanges(released, { ...current, info: { ...current.info, version: released.info.version } }, now);
}

/** Everything that changed in both contracts since the baseline, judged by the policy. */
export async function contractChanges(baseline: Contracts, current: Contracts, now = Date.now()): Promise<ContractChange[]> {
  return [
    ...(await changesOf('graphql', baseline.graphql, current.graphql, now)),
    ...(await changesOf('openapi', baseline.openapi, current.openapi, now)),
  ];
}

/** The changes to one contract among `changes`. */
export const changesIn = (changes: readonly ContractChange[], name: ContractName) =>
  changes.filter((change) => change.contract === contractLabels[name]);

/** The release each contract needs for `changes`, on its own version line. */
export function requiredBumps(changes: readonly ContractChange[]): Record<ContractName, Bump> {
  return { graphql: requiredBump(changesIn(changes, 'graphql')), openapi: requiredBump(changesIn(changes, 'openapi')) };
}

/**
 * The report of a check: the breaking changes that fail it, then what is let
 * through or only listed, and what the next release of each contract would be.
 */
export function contractReport(baseline: Baseline, changes: readonly ContractChange[]): string {
  const section = (title: string, list: readonly ContractChange[]) =>
    list.length === 0 ? [] : [`${title} (${list.length}):`, ...list.map((change) => `  - ${describeChange(change)}`)];
  const failing = refused(changes);
  const allowed = changes.filter((change) => change.kind === 'breaking' && change.exemption !== undefined);
  const dangerous = changes.filter((change) => change.kind === 'dangerous');
  const other = changes.filter((change) => change.kind === 'addition' || change.kind === 'annotation');
  const bumps = requiredBumps(changes);
  const releases = contractNames
    .filter((name) => bumps[name] !== 'none')
    .map((name) => {
      const bump = bumps[name] as Exclude<Bump, 'none'>;
      return `${contractLabels[name]} ${bumpVersion(baseline.release[name].version, bump)} (${bump})`;
    });
  const released = contractNames.map((name) => `${contractLabels[name]} ${baseline.release[name].version}`).join(' and ');
  return [
    `Contracts compared with their releases in contract/: ${released}.`,
    ...section('Breaking changes, refused', failing),
    ...section('Breaking changes let through by the deprecation policy', allowed),
    ...section('Dangerous changes', dangerous),
    ...section('Additions and text changes', other),
    failing.length > 0
      ? 'Keep the old element beside the new one and deprecate it with a sunset date (see docs/versioning.md), or, for a deliberate breaking release, run `npm run contract:release -- --breaking`.'
      : releases.length === 0
        ? 'Nothing changed since the releases.'
        : `Not released yet: \`npm run contract:release\` would release ${releases.join(' and ')}.`,
  ].join('\n');
}

/** 00:00 UTC of a release day: when the policy is applied to the release made that day. */
const startOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

/**
 * What is wrong with the releases kept in `dir`: a document that does not
 * carry its release's version, and above all a version that does not follow
 * its own contract's diff from the release before it. The step from that
 * release must be exactly the one its changes need (judged as on the day it
 * was released): a major for a break and only then, a minor for additions
 * and dangerous changes, a patch for texts alone; the other contract's
 * changes count for nothing. A first release is 1.0.0.
 */
export async function releaseProblems(dir = CONTRACT_DIR): Promise<string[]> {
  const baseline = await readBaseline(dir);
  const problems: string[] = [];
  const carried = {
    graphql: contractVersionIn(buildSchema(baseline.graphql).description),
    openapi: baseline.openapi.info.version,
  };
  for (const name of contractNames) {
    const { version, released } = baseline.release[name];
    const label = contractLabels[name];
    if (carried[name] !== version) {
      problems.push(`The released ${label} contract carries the version ${carried[name] ?? '(none)'}, not its release's ${version}.`);
    }
    const previous = await releaseBefore(name, version, dir);
    if (previous === undefined) {
      if (version !== '1.0.0') problems.push(`${label} ${version} is a first release (none before it is kept), which is 1.0.0.`);
      continue;
    }
    const changes = await changesOf(name, previous.document, baseline[name], startOf(released));
    const needed = requiredBump(changes);
    const step = versionStep(previous.version, version);
    if (step === needed) continue;
    const what = step === undefined ? `does not follow ${previous.version} by one step` : `is a ${step} release after ${previous.version}`;
    if (needed === 'none') {
      problems.push(`${label} ${version} ${what}, but nothing in ${label} changed: it stays ${previous.version}.`);
      continue;
    }
    const why = needed === 'major' ? 'some break callers' : 'none breaks a caller';
    const list = changes.map((change) => `\n  - [${change.kind}] ${describeChange(change)}`).join('');
    problems.push(
      `${label} ${version} ${what}, but its own changes (${why}) need a ${needed} release: ${bumpVersion(previous.version, needed)}.${list}`,
    );
  }
  return problems;
}
