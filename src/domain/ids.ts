import { validationFailed } from '../errors.js';

/** The largest id: PostgreSQL's bigint, a signed 64-bit integer. */
export const MAX_INT64 = 2n ** 63n - 1n;

/**
 * Ids are PostgreSQL bigints (int64). They travel as strings in GraphQL (`ID`)
 * so that no id above 2^53 is ever rounded by a JSON number. `field` is the
 * name of the argument or input field the id came in (`id`, `petId`,
 * `categoryId`): the field a VALIDATION_FAILED error names.
 */
export function parseId(value: string | number, field = 'id'): bigint {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    // Above 2^53 a number has already been rounded: it may name another record than was meant.
    throw validationFailed(field, `${field} must be a whole number written as a string above 2^53, got ${value}.`);
  }
  const text = String(value).trim();
  // One rule, one message, whichever way a value breaks it: not a number, or a number out of range.
  const id = /^\d{1,19}$/.test(text) ? BigInt(text) : 0n;
  if (id < 1n || id > MAX_INT64) {
    throw validationFailed(
      field,
      `${field} must be a whole number from 1 to ${MAX_INT64} (an int64 id), got "${String(value).slice(0, 40)}".`,
    );
  }
  return id;
}
