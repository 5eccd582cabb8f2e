import type { Baseline } from './baseline.js';
import type { Contracts } from './current.js';
import { graphqlChanges } from './graphql-changes.js';
import { openApiChanges } from './openapi-changes.js';
import { type ContractChange, describeChange, refused, requiredBump } from './policy.js';

/**
 * Everything that changed in both contracts since the baseline, judged by the
 * policy. The OpenAPI document's info.version is the release's own number, not
 * part of what is compared: a release moves it.
 */
export async function contractChanges(baseline: Contracts, current: Contracts, now = Date.now()): Promise<ContractChange[]> {
  const openapi = { ...current.openapi, info: { ...current.openapi.info, version: baseline.openapi.info.version } };
  return [
    ...(await graphqlChanges(baseline.graphql, current.graphql, now)),
    ...openApiChanges(baseline.openapi, openapi, now),
  ];
}

/**
 * The report of a check: the breaking changes that fail it, then what is let
 * through or only listed, and what the next release would need.
 */
export function contractReport(baseline: Baseline, changes: readonly ContractChange[]): string {
  const section = (title: string, list: readonly ContractChange[]) =>
    list.length === 0 ? [] : [`${title} (${list.length}):`, ...list.map((change) => `  - ${describeChange(change)}`)];
  const failing = refused(changes);
  const allowed = changes.filter((change) => change.kind === 'breaking' && change.exemption !== undefined);
  const dangerous = changes.filter((change) => change.kind === 'dangerous');
  const other = changes.filter((change) => change.kind === 'addition' || change.kind === 'annotation');
  const bump = requiredBump(changes);
  return [
    `Contracts compared with the release ${baseline.release.version} (contract/).`,
    ...section('Breaking changes, refused', failing),
    ...section('Breaking changes let through by the deprecation policy', allowed),
    ...section('Dangerous changes', dangerous),
    ...section('Additions and text changes', other),
    failing.length > 0
      ? 'Keep the old element beside the new one and deprecate it with a sunset date (see README, "Versioning and deprecation"), or, for a deliberate breaking release, run `npm run contract:release -- --breaking`.'
      : bump === 'none'
        ? 'Nothing changed since the release.'
        : `Not released yet: \`npm run contract:release\` would make a ${bump} release.`,
  ].join('\n');
}
