import { z } from 'zod';
import { validationFailed } from '../errors.js';

/**
 * The bounds we chose where the spec says "not shown". Every write validates
 * its input here before touching the database; a bad value is refused with
 * the field named, and nothing is written.
 */
export const limits = {
  nameLength: { min: 1, max: 100 },
  descriptionLength: { max: 1000 },
  orderQuantity: { min: 1, max: 1000 },
  stockQuantity: { min: 0, max: 1_000_000 },
  // Year 0, which RFC 3339 allows, is 1 BC to PostgreSQL; a time before year 1 or after 9999 is stored,
  // but Prisma reads it back as an invalid date, so the same order would answer INTERNAL on one path
  // and its date on another.
  shipDate: { from: '0001-01-01T00:00:00.000Z', to: '9999-12-31T23:59:59.999Z' },
} as const;

// Control characters break logs and terminals and make no sense in a name;
// refuse them rather than store them. A description may hold line breaks
// (\n, or \r\n as browsers send them) and tabs, but no other control character.
// eslint-disable-next-line no-control-regex -- the point is to match them
const controlCharacters = /[\u0000-\u001F\u007F-\u009F]/;
// eslint-disable-next-line no-control-regex -- the point is to match them
const controlCharactersBesideLineBreaks = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
// Half of a UTF-16 surrogate pair on its own is not text: it cannot be written as UTF-8, and
// PostgreSQL would store U+FFFD in its place. (A whole pair, an emoji, is one code point.)
const loneSurrogate = /\p{Cs}/u;

// Lengths count characters (code points, as zod's min/max do), as PostgreSQL's
// VARCHAR(n) does: a name of 100 emoji is 100 characters.
export const name = z
  .string({ error: 'name must be text' })
  .trim()
  .min(limits.nameLength.min, { error: 'name must not be empty' })
  .max(limits.nameLength.max, { error: `name must be at most ${limits.nameLength.max} characters` })
  .refine((value) => !controlCharacters.test(value), { error: 'name must not contain control characters' })
  .refine((value) => !loneSurrogate.test(value), { error: 'name must be valid Unicode text (no lone surrogates)' });

export const description = z
  .string({ error: 'description must be text' })
  .trim()
  .max(limits.descriptionLength.max, {
    error: `description must be at most ${limits.descriptionLength.max} characters`,
  })
  .refine((value) => !controlCharactersBesideLineBreaks.test(value), {
    error: 'description must not contain control characters other than tabs and line breaks',
  })
  .refine((value) => !loneSurrogate.test(value), {
    error: 'description must be valid Unicode text (no lone surrogates)',
  });

export const wholeNumberBetween = (field: string, min: number, max: number) => {
  const error = `${field} must be a whole number from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

export const orderQuantity = wholeNumberBetween('quantity', limits.orderQuantity.min, limits.orderQuantity.max);
export const stockQuantity = wholeNumberBetween('quantity', limits.stockQuantity.min, limits.stockQuantity.max);

const shipDateError = `shipDate must be from ${limits.shipDate.from} to ${limits.shipDate.to}`;
export const shipDate = z
  .date({ error: 'shipDate must be a date-time' })
  .min(new Date(limits.shipDate.from), { error: shipDateError })
  .max(new Date(limits.shipDate.to), { error: shipDateError });

/** Parses `input` with `schema`, or throws VALIDATION_FAILED naming the first bad field. */
export function validate<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') || 'input';
  throw validationFailed(field, issue?.message ?? `${field} is not valid`);
}
