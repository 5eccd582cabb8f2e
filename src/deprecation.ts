/**
 * How a deprecation names its sunset date, the day the element goes away:
 * GraphQL deprecation reasons carry it as YYYY-MM-DD ("… will be removed on
 * 2027-06-30 (sunset date)"), OpenAPI operations as `x-sunset`. The contract
 * check reads it to let a removal through after that day; GraphQL answers
 * repeat it to the callers that still use the element.
 */

const ISO_DATE = /\b(\d{4}-\d{2}-\d{2})\b/;

/** The first YYYY-MM-DD in a deprecation reason (or `x-sunset`) that is a real date; undefined when none. */
export function sunsetDateIn(text: string | null | undefined): string | undefined {
  const date = text ? ISO_DATE.exec(text)?.[1] : undefined;
  return date !== undefined && !Number.isNaN(Date.parse(`${date}T00:00:00Z`)) ? date : undefined;
}

/** The start (00:00 UTC) of a sunset date. */
export const sunsetStart = (sunsetDate: string) => new Date(`${sunsetDate}T00:00:00Z`);
