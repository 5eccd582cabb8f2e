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

/** A time span (UTC) before the sunset during which the lookup answers as it will after it. */
export interface BrownoutWindow {
  start: Date;
  end: Date;
}

/** The settings the policy is made from. */
export interface LegacySettings {
  sunsetDate: string;
  afterSunset: LegacyAfterSunset;
  /** LEGACY_BROWNOUTS: none unless set. */
  brownouts?: readonly BrownoutWindow[];
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

/** How each surface of the lookup is named in the answers that refuse it. */
const surfaceNames: Record<string, string> = { [LEGACY_FIELD]: 'getPetById', [LEGACY_ROUTE]: LEGACY_ROUTE };

/** Why the lookup refused to answer a caller. */
export interface LegacyRefusal {
  /** LEGACY_FIELD or LEGACY_ROUTE, as the deprecated-use metric names them. */
  target: string;
  /** Token subject, or anonymous. */
  client: string;
  requestId?: string;
  reason: 'sunset' | 'brownout';
  /** The end of the brownout window, for a brownout. */
  until?: Date;
}

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
  brownouts: readonly BrownoutWindow[];
  /** The brownout window `now` falls in, if any. */
  brownoutAt(now?: number): BrownoutWindow | undefined;
  /**
   * Throws GONE, naming the sunset date and the replacement, after the sunset
   * date (with LEGACY_AFTER_SUNSET=gone) and during a brownout window before
   * it; otherwise returns. `target` is LEGACY_FIELD or LEGACY_ROUTE; each
   * refusal is reported to the policy's `onRefusal` (log and metrics).
   */
  refuseWhenRetired(target: string, caller: { client: string; requestId?: string }, now?: number): void;
}

export function legacyPolicy(
  settings: LegacySettings,
  links: LegacyLinks,
  onRefusal: (refusal: LegacyRefusal) => void = () => {},
): LegacyPolicy {
  const brownouts = [...(settings.brownouts ?? [])].sort((a, b) => a.start.getTime() - b.start.getTime());
  const brownoutAt = (now = Date.now()) => brownouts.find((window) => window.start.getTime() <= now && now < window.end.getTime());
  const sunsetAt = new Date(`${settings.sunsetDate}T00:00:00Z`);
  const announced = new Date(`${LEGACY_DEPRECATION_DATE}T00:00:00Z`);
  // A sunset moved earlier than the announcement (as tests do) must not put Deprecation after Sunset (RFC 9745 §3).
  const deprecatedAt = announced < sunsetAt ? announced : sunsetAt;
  return {
    sunsetDate: settings.sunsetDate,
    afterSunset: settings.afterSunset,
    deprecatedAt,
    sunsetAt,
    deprecationReason: legacyLookupDeprecation(settings.sunsetDate),
    headers: {
      Deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
      Sunset: sunsetAt.toUTCString(),
      Link: `<${links.successor}>; rel="successor-version", <${links.policy}>; rel="sunset"`,
    },
    brownouts,
    brownoutAt,
    refuseWhenRetired(target, caller, now = Date.now()) {
      const name = surfaceNames[target] ?? target;
      const replacement = `Use the GraphQL query pet(id:) at ${links.successor}.`;
      if (now >= sunsetAt.getTime()) {
        if (settings.afterSunset === 'serve') return;
        onRefusal({ target, ...caller, reason: 'sunset' });
        throw new DomainError('GONE', `${name} was retired on ${settings.sunsetDate}. ${replacement}`);
      }
      const window = brownoutAt(now);
      if (!window) return;
      onRefusal({ target, ...caller, reason: 'brownout', until: window.end });
      throw new DomainError(
        'GONE',
        `${name} is browned out until ${window.end.toISOString()}: a scheduled rehearsal of its retirement on ` +
          `${settings.sunsetDate}, after which it answers like this for good. ${replacement}`,
      );
    },
  };
}

/** LEGACY_BROWNOUTS windows are at most this long: a rehearsal, not a sunset. */
export const MAX_BROWNOUT_HOURS = 24;

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$/;
const DURATION = /^PT(?:(\d+)H)?(?:(\d+)M)?$/;
const BROWNOUT_EXAMPLE = '2027-05-04T14:00Z/PT2H or 2027-05-04T14:00Z/2027-05-04T16:00Z';

/** A YYYY-MM-DDTHH:MM[:SS]Z time; an invalid Date for one that is no real time (February 30th rolls over in Date). */
function utcTime(text: string): Date {
  const time = new Date(text);
  const written = text.length === 17 ? `${text.slice(0, 16)}:00Z` : text;
  return !Number.isNaN(time.getTime()) && time.toISOString() === written.replace('Z', '.000Z') ? time : new Date(Number.NaN);
}

/**
 * Reads LEGACY_BROWNOUTS: comma-separated windows, each START/END or
 * START/DURATION (ISO 8601, in UTC with Z; durations in hours and minutes,
 * PT2H30M). Every bad window gets a problem naming it.
 */
export function parseBrownouts(text: string, sunsetDate: string): { windows: BrownoutWindow[]; problems: string[] } {
  const windows: BrownoutWindow[] = [];
  const problems: string[] = [];
  const sunsetAt = new Date(`${sunsetDate}T00:00:00Z`);
  for (const item of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const bad = (why: string) => problems.push(`LEGACY_BROWNOUTS: "${item}" ${why}`);
    const [startText = '', endText = '', ...rest] = item.split('/');
    if (rest.length > 0 || !DATE_TIME.test(startText)) {
      bad(`is not a window START/END or START/DURATION in UTC (e.g. ${BROWNOUT_EXAMPLE})`);
      continue;
    }
    const start = utcTime(startText);
    const duration = DURATION.exec(endText);
    const end = duration
      ? new Date(start.getTime() + (Number(duration[1] ?? 0) * 60 + Number(duration[2] ?? 0)) * 60_000)
      : DATE_TIME.test(endText)
        ? utcTime(endText)
        : undefined;
    if (end === undefined || (duration && !duration[1] && !duration[2])) {
      bad(`does not end with a UTC time or a duration such as PT2H (e.g. ${BROWNOUT_EXAMPLE})`);
    } else if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) {
      bad('is not a real date and time');
    } else if (end <= start) {
      bad('ends before it starts');
    } else if (end.getTime() - start.getTime() > MAX_BROWNOUT_HOURS * 3_600_000) {
      bad(`is longer than ${MAX_BROWNOUT_HOURS} hours: a brownout is a rehearsal of the sunset, not the sunset`);
    } else if (end > sunsetAt) {
      bad(`ends after the sunset date ${sunsetDate} (LEGACY_SUNSET_DATE): brownouts come before it`);
    } else {
      windows.push({ start, end });
    }
  }
  return { windows, problems };
}
