import { DomainError } from './errors.js';

/**
 * The one policy of the legacy single-pet lookup (GraphQL `getPetById`, REST
 * `GET /pets/{petId}`): when it was deprecated, when it goes away, what it
 * does after that, how it says so (the GraphQL deprecation reason, the RFC
 * 9745/8594 headers) and what its use is counted as. Built once from the
 * settings and handed to every surface that serves it.
 */

/** The legacy lookup goes away on this date unless LEGACY_SUNSET_DATE says otherwise. */
export const DEFAULT_LEGACY_SUNSET_DATE = '2027-06-30';

/** When the legacy lookup was announced as deprecated (RFC 9745 `Deprecation`). */
export const LEGACY_DEPRECATION_DATE = '2026-11-21';

/** What the legacy lookup does once its sunset date has passed (LEGACY_AFTER_SUNSET). */
export const legacyAfterSunsetChoices = ['serve', 'gone'] as const;
export type LegacyAfterSunset = (typeof legacyAfterSunsetChoices)[number];
export const DEFAULT_LEGACY_AFTER_SUNSET: LegacyAfterSunset = 'gone';

/** The two settings the policy is made from. */
export interface LegacySettings {
  sunsetDate: string;
  afterSunset: LegacyAfterSunset;
}

/** Where the deprecation headers point: the replacement, and the document stating the policy. */
export interface LegacyLinks {
  successor: string;
  policy: string;
}

/** The REST route of the legacy lookup, as the deprecated-use metric names it. */
export const LEGACY_ROUTE = 'GET /pets/{petId}';

/** The GraphQL field of the legacy lookup, as a schema coordinate (and as the deprecated-use metric names it). */
export const LEGACY_FIELD = 'Query.getPetById';

/** The deprecation reason of `getPetById`, naming its replacement and the sunset date. */
export function legacyLookupDeprecation(sunsetDate: string): string {
  return `Use pet(id:) instead. getPetById will be removed on ${sunsetDate} (sunset date).`;
}

export interface LegacyPolicy extends LegacySettings {
  deprecatedAt: Date;
  /** The start (00:00 UTC) of the sunset date: from then on the lookup is past its sunset. */
  sunsetAt: Date;
  /** The GraphQL deprecation reason of `getPetById`. */
  deprecationReason: string;
  /** Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers of every answer of the REST route. */
  headers: Readonly<Record<'Deprecation' | 'Sunset' | 'Link', string>>;
  /**
   * After the sunset date, with LEGACY_AFTER_SUNSET=gone, throws GONE naming
   * the replacement; `retired` names the surface (`getPetById`, the route).
   */
  refuseAfterSunset(retired: string, now?: number): void;
}

export function legacyPolicy(settings: LegacySettings, links: LegacyLinks): LegacyPolicy {
  const sunsetAt = new Date(`${settings.sunsetDate}T00:00:00Z`);
  const announced = new Date(`${LEGACY_DEPRECATION_DATE}T00:00:00Z`);
  // A sunset moved earlier than the announcement (as tests do) must not put Deprecation after Sunset (RFC 9745 §3).
  const deprecatedAt = announced < sunsetAt ? announced : sunsetAt;
  return {
    ...settings,
    deprecatedAt,
    sunsetAt,
    deprecationReason: legacyLookupDeprecation(settings.sunsetDate),
    headers: {
      Deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
      Sunset: sunsetAt.toUTCString(),
      Link: `<${links.successor}>; rel="successor-version", <${links.policy}>; rel="sunset"`,
    },
    refuseAfterSunset(retired, now = Date.now()) {
      if (settings.afterSunset === 'gone' && now >= sunsetAt.getTime()) {
        throw new DomainError(
          'GONE',
          `${retired} was retired on ${settings.sunsetDate}. Use the GraphQL query pet(id:) at ${links.successor}.`,
        );
      }
    },
  };
}
