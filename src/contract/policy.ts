/**
 * The compatibility policy both contracts are held to, in one place: what a
 * change is (breaking, dangerous, an addition, an annotation), when a breaking
 * change is let through (the element was deprecated in the released contract
 * and its sunset date has passed, or it was marked EXPERIMENTAL or BETA), how
 * much notice a new deprecation must give, and which version a release needs.
 */
import { sunsetStart } from '../deprecation.js';

export { sunsetDateIn } from '../deprecation.js';

/** What a change does to a caller written against the released contract. */
export type ChangeKind =
  /** Such a caller may fail: a removed field, enum value or route, a new required argument, a changed type. */
  | 'breaking'
  /** Such a caller keeps working but may see something it does not expect (a new enum value in an answer). */
  | 'dangerous'
  /** Something new; nothing a caller relies on changes (including a new deprecation). */
  | 'addition'
  /** Descriptions and other texts only. */
  | 'annotation';

/** Why a breaking change is let through. */
export type Exemption =
  /** Deprecated in the released contract, and its sunset date has passed. */
  | { reason: 'retired'; element: string; sunsetDate: string }
  /** Marked EXPERIMENTAL or BETA in the released contract: outside the compatibility promise. */
  | { reason: 'unstable'; element: string; level: string };

/**
 * The two contracts, each with a version line of its own: a change to one
 * moves only its own version, so a REST caller never reads a GraphQL break
 * into a new major of the OpenAPI document, nor the other way round.
 */
export const contractNames = ['graphql', 'openapi'] as const;
export type ContractName = (typeof contractNames)[number];

/** How a change and a report name each contract. */
export const contractLabels = { graphql: 'GraphQL', openapi: 'OpenAPI' } as const satisfies Record<ContractName, string>;

export interface ContractChange {
  contract: (typeof contractLabels)[ContractName];
  kind: ChangeKind;
  /** A schema coordinate (`Query.pets`), or `GET /store/orders` and where in it. */
  where: string;
  message: string;
  /** Set on a breaking change the policy lets through. */
  exemption?: Exemption;
}

/** A new deprecation gives callers at least this much notice before its sunset date. */
export const MIN_DEPRECATION_DAYS = 180;

const DAY_MS = 86_400_000;
/** Whether the sunset date has begun at `now` (the same 00:00 UTC the legacy lookup goes away at). */
export function sunsetHasPassed(sunsetDate: string, now: number): boolean {
  return sunsetStart(sunsetDate).getTime() <= now;
}

/**
 * The policy breach of a deprecation new since the release, if any: it must
 * name a sunset date at least MIN_DEPRECATION_DAYS after now.
 */
export function deprecationNoticeProblem(element: string, sunsetDate: string | undefined, now: number) {
  const earliest = new Date(now + MIN_DEPRECATION_DAYS * DAY_MS).toISOString().slice(0, 10);
  if (sunsetDate === undefined) {
    return `${element} is newly deprecated without a sunset date: name one (YYYY-MM-DD), ${earliest} or later.`;
  }
  if (sunsetDate < earliest) {
    return `${element} is newly deprecated with the sunset date ${sunsetDate}, less than ${MIN_DEPRECATION_DAYS} days away: ${earliest} at the earliest.`;
  }
  return undefined;
}

/** Breaking changes that no exemption lets through: these fail the check. */
export const refused = (changes: readonly ContractChange[]) =>
  changes.filter((change) => change.kind === 'breaking' && change.exemption === undefined);

export type Bump = 'major' | 'minor' | 'patch' | 'none';

/**
 * The smallest semantic-version step a release of these changes needs: any
 * breaking change, retired ones included, makes a major; breaking changes to
 * EXPERIMENTAL or BETA elements, dangerous changes and additions a minor;
 * texts alone a patch.
 */
export function requiredBump(changes: readonly ContractChange[]): Bump {
  if (changes.some((change) => change.kind === 'breaking' && change.exemption?.reason !== 'unstable')) return 'major';
  if (changes.some((change) => change.kind !== 'annotation')) return 'minor';
  return changes.length > 0 ? 'patch' : 'none';
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

export function parseVersion(version: string): [number, number, number] {
  const match = SEMVER.exec(version);
  if (!match) throw new Error(`"${version}" is not a version MAJOR.MINOR.PATCH.`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

export function bumpVersion(version: string, bump: Exclude<Bump, 'none'>): string {
  const [major, minor, patch] = parseVersion(version);
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

/**
 * The kind of release that leads from `previous` to `next` (1.4.2 to 2.0.0 a
 * major, to 1.5.0 a minor, to 1.4.3 a patch), or undefined when `next` is not
 * one step after `previous` (the same, older, or skipping a version).
 */
export function versionStep(previous: string, next: string): Exclude<Bump, 'none'> | undefined {
  const steps = ['major', 'minor', 'patch'] as const;
  return steps.find((step) => bumpVersion(previous, step) === next);
}

/** Compares two versions: negative when `a` comes before `b`. */
export function compareVersions(a: string, b: string): number {
  const [left, right] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < 3; i++) if (left[i] !== right[i]) return left[i]! - right[i]!;
  return 0;
}

/** One line per change, for the check's failure message and the release notes. */
export function describeChange(change: ContractChange): string {
  const exemption =
    change.exemption?.reason === 'retired'
      ? ` (allowed: ${change.exemption.element} was deprecated with the sunset date ${change.exemption.sunsetDate}, now passed)`
      : change.exemption?.reason === 'unstable'
        ? ` (allowed: ${change.exemption.element} is ${change.exemption.level})`
        : '';
  return `${change.contract} ${change.where}: ${change.message}${exemption}`;
}
