/**
 * How big a busy client's next share of a limit kept in Redis is, for the request count
 * (middleware/rate-limit-shares.ts) and the cost budget (demand/budget-shares.ts) alike: what an
 * instance holds of a client's limit is what that client may be refused early elsewhere.
 */

/** A client whose share ran out (request count) or was used (budget) within this time is busy. */
export const BUSY_WITHIN_MS = 100;
/** A share never covers more than this many requests. */
const MAX_SHARE_REQUESTS = 32;
/** A share never holds more than this part of what the client had left when it was taken. */
const PART_OF_REMAINING = 16;

/**
 * A busy client's next share: twice the last, at most MAX_SHARE_REQUESTS requests of `request`
 * points and a sixteenth of what it had left, and never less than the request that takes it.
 */
export const nextShareSize = (last: number, request: number, remaining: number) =>
  Math.max(request, Math.min(last * 2, request * MAX_SHARE_REQUESTS, Math.floor(remaining / PART_OF_REMAINING)));
