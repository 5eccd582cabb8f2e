import { DomainError } from './errors.js';

/**
 * The legacy single-pet lookup (GraphQL `getPetById`, REST `GET /pets/{petId}`)
 * goes away on this date unless LEGACY_SUNSET_DATE says otherwise.
 */
export const DEFAULT_LEGACY_SUNSET_DATE = '2027-06-30';

/** When the legacy lookup was announced as deprecated (RFC 9745 `Deprecation`). */
export const LEGACY_DEPRECATION_DATE = '2026-11-21';

/** What `GET /pets/{petId}` does once its sunset date has passed (LEGACY_AFTER_SUNSET). */
export const legacyAfterSunsetChoices = ['serve', 'gone'] as const;
export type LegacyAfterSunset = (typeof legacyAfterSunsetChoices)[number];
export const DEFAULT_LEGACY_AFTER_SUNSET: LegacyAfterSunset = 'gone';

export interface LegacySchedule {
  deprecatedAt: Date;
  /** The start (00:00 UTC) of the sunset date: from then on the route is past its sunset. */
  sunsetAt: Date;
}

export function legacySchedule(sunsetDate: string): LegacySchedule {
  const sunsetAt = new Date(`${sunsetDate}T00:00:00Z`);
  const announced = new Date(`${LEGACY_DEPRECATION_DATE}T00:00:00Z`);
  // A sunset moved earlier than the announcement (as tests do) must not put Deprecation after Sunset (RFC 9745 §3).
  const deprecatedAt = announced < sunsetAt ? announced : sunsetAt;
  return { deprecatedAt, sunsetAt };
}

export interface LegacyPolicy {
  sunsetDate: string;
  afterSunset: LegacyAfterSunset;
}

/**
 * The one rule for both surfaces of the legacy lookup (REST GET /pets/{petId}
 * and GraphQL getPetById): after the sunset date, with LEGACY_AFTER_SUNSET=gone,
 * it answers GONE naming its replacement.
 */
export function refuseAfterSunset(policy: LegacyPolicy, retired: string, now = Date.now()): void {
  if (policy.afterSunset === 'gone' && now >= legacySchedule(policy.sunsetDate).sunsetAt.getTime()) {
    throw new DomainError(
      'GONE',
      `${retired} was retired on ${policy.sunsetDate}. Use the GraphQL query pet(id:) at /graphql.`,
    );
  }
}
