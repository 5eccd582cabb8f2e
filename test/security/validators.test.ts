import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseId } from '../../src/domain/ids.js';
import {
  description,
  limits,
  name,
  orderQuantity,
  stockQuantity,
  validate,
  wholeNumberBetween,
} from '../../src/domain/validation.js';
import { DomainError } from '../../src/errors.js';

/**
 * Property-based tests (fast-check) of every input validator: what is valid is
 * accepted and normalised; what is not is refused as VALIDATION_FAILED naming
 * the field, with a message that does not echo a huge input back.
 */

const MAX_INT64 = 2n ** 63n - 1n;

/** The DomainError `run` throws; fails when it throws nothing or something else. */
function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a refusal, but the value was accepted');
}

function expectRefused(run: () => unknown, field: string, message?: RegExp) {
  const error = refusal(run);
  expect(error.code).toBe('VALIDATION_FAILED');
  expect(error.status).toBe(400);
  expect(error.field).toBe(field);
  if (message) expect(error.message).toMatch(message);
  expect(error.message.length).toBeLessThan(200);
}

const codePoints = (text: string) => [...text].length;

// Characters by kind, over the whole of Unicode.
const isControl = (code: number) => code <= 0x1f || (code >= 0x7f && code <= 0x9f);
const isSurrogate = (code: number) => code >= 0xd800 && code <= 0xdfff;
/** Any code point a name may hold (no control character, no lone surrogate half). */
const textCharacter = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0xa0, max: 0x10ffff }).filter((code) => !isSurrogate(code)),
    fc.constantFrom(0x1f436, 0x1f415, 0x4e00, 0x0627, 0x00e9, 0x20, 0xa0, 0x3000, 0x2028, 0xfeff),
  )
  .map((code) => String.fromCodePoint(code));
const controlCharacter = fc
  .integer({ min: 0, max: 0x9f })
  .filter(isControl)
  .map((code) => String.fromCharCode(code));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const text = (maxLength: number) => fc.array(textCharacter, { minLength: 0, maxLength }).map((chars) => chars.join(''));
/** Text with something that is not blank at both ends, so trimming keeps it whole. */
const solid = fc.constantFrom('a', 'Z', '7', '🐶', 'é', '犬', '-');
const notText = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.object());

describe('name', () => {
  const check = (value: unknown) => validate(z.object({ name }), { name: value }).name;

  it('accepts text of 1 to 100 characters after trimming, trimmed', () => {
    fc.assert(
      fc.property(text(110), (value) => {
        const trimmed = value.trim();
        const length = codePoints(trimmed);
        if (length >= limits.nameLength.min && length <= limits.nameLength.max) expect(check(value)).toBe(trimmed);
        else expectRefused(() => check(value), 'name', /name must (not be empty|be at most 100 characters)/);
      }),
      { numRuns: 500 },
    );
  });

  it('counts characters, not UTF-16 units: 100 emoji are a name, 101 are not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.constantFrom('🐶', '𝔸', '😀'), (count, emoji) => {
        const value = emoji.repeat(count);
        if (count <= 100) expect(check(value)).toBe(value);
        else expectRefused(() => check(value), 'name', /at most 100 characters/);
      }),
    );
  });

  it('refuses a control character anywhere inside', () => {
    fc.assert(
      fc.property(solid, text(40), controlCharacter, text(40), solid, (start, before, control, after, end) => {
        expectRefused(() => check(`${start}${before}${control}${after}${end}`), 'name', /control characters/);
      }),
    );
  });

  it('refuses a lone surrogate anywhere inside', () => {
    fc.assert(
      fc.property(solid, text(40), loneSurrogate, text(40), solid, (start, before, half, after, end) => {
        expectRefused(() => check(`${start}${before}${half}${after}${end}`), 'name', /valid Unicode/);
      }),
    );
  });

  it('refuses what is not text', () => {
    fc.assert(fc.property(notText, (value) => expectRefused(() => check(value), 'name', /name must be text/)));
  });
});

describe('description', () => {
  const check = (value: unknown) => validate(z.object({ description }), { description: value }).description;

  it('accepts text of at most 1000 characters after trimming, tabs and line breaks included, trimmed', () => {
    const character = fc.oneof({ weight: 8, arbitrary: textCharacter }, fc.constantFrom('\t', '\n', '\r\n'));
    fc.assert(
      fc.property(
        fc.array(character, { maxLength: 1_100 }).map((chars) => chars.join('')),
        (value) => {
          const trimmed = value.trim();
          if (codePoints(trimmed) <= limits.descriptionLength.max) expect(check(value)).toBe(trimmed);
          else expectRefused(() => check(value), 'description', /at most 1000 characters/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses any other control character, and lone surrogates, inside', () => {
    const forbidden = fc.oneof(
      controlCharacter.filter((character) => !['\t', '\n', '\r'].includes(character)),
      loneSurrogate,
    );
    fc.assert(
      fc.property(solid, text(30), forbidden, text(30), solid, (start, before, bad, after, end) => {
        expectRefused(() => check(`${start}${before}${bad}${after}${end}`), 'description');
      }),
    );
  });

  it('refuses what is not text', () => {
    fc.assert(fc.property(notText.filter((value) => value !== null), (value) => expectRefused(() => check(value), 'description')));
  });
});

describe('whole numbers in a range', () => {
  it('accept exactly the whole numbers from min to max, and name their field otherwise', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.oneof(fc.integer({ min: -3_000_000, max: 3_000_000 }), fc.double(), fc.constantFrom(Number.NaN, Infinity)),
        fc.constantFrom('quantity', 'limit', 'input.quantity'),
        (min, span, value, field) => {
          const max = min + span;
          const schema = z.object({ [field]: wholeNumberBetween(field, min, max) });
          const inRange = Number.isInteger(value) && value >= min && value <= max;
          if (inRange) expect(validate(schema, { [field]: value })[field]).toBe(value);
          else {
            expectRefused(
              () => validate(schema, { [field]: value }),
              field,
              new RegExp(`^${field.replace('.', '\\.')} must be a whole number from ${min} to ${max}$`),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('orderQuantity is 1 to 1000, stockQuantity 0 to 1,000,000; text is not a number', () => {
    const cases = [
      [orderQuantity, limits.orderQuantity],
      [stockQuantity, limits.stockQuantity],
    ] as const;
    for (const [schema, bounds] of cases) {
      const check = (value: unknown) => validate(z.object({ quantity: schema }), { quantity: value }).quantity;
      fc.assert(
        fc.property(fc.integer({ min: bounds.min - 1_000, max: bounds.max + 1_000 }), (value) => {
          if (value >= bounds.min && value <= bounds.max) expect(check(value)).toBe(value);
          else expectRefused(() => check(value), 'quantity');
        }),
      );
      fc.assert(fc.property(fc.oneof(fc.string(), fc.boolean(), fc.constant(null)), (value) => expectRefused(() => check(value), 'quantity')));
      for (const edge of [bounds.min, bounds.max]) expect(check(edge)).toBe(edge);
      for (const edge of [bounds.min - 1, bounds.max + 1, bounds.min + 0.5]) expectRefused(() => check(edge), 'quantity');
    }
  });
});

describe('validate', () => {
  it('names the first bad field by its path, and "input" when there is none', () => {
    const schema = z.object({ input: z.object({ name, quantity: orderQuantity }) });
    fc.assert(
      fc.property(controlCharacter, fc.integer({ min: 1_001 }), (control, quantity) => {
        expectRefused(() => validate(schema, { input: { name: `a${control}b`, quantity: 1 } }), 'input.name');
        expectRefused(() => validate(schema, { input: { name: 'Rex', quantity } }), 'input.quantity');
      }),
    );
    expectRefused(() => validate(name, 42), 'input', /name must be text/);
  });
});

describe('parseId', () => {
  it('accepts every int64 id from 1 to 2^63-1, as digits or a safe number, with blanks around', () => {
    fc.assert(
      fc.property(fc.bigInt(1n, MAX_INT64), fc.constantFrom('', ' ', '\t', '\n '), (id, blank) => {
        expect(parseId(`${blank}${id}${blank}`)).toBe(id);
        if (id <= BigInt(Number.MAX_SAFE_INTEGER)) expect(parseId(Number(id))).toBe(id);
      }),
      { numRuns: 500 },
    );
  });

  it('normalises leading zeros, up to 19 digits', () => {
    fc.assert(
      fc.property(fc.bigInt(1n, 999_999_999n), fc.integer({ min: 1, max: 10 }), (id, zeros) => {
        const text = `${'0'.repeat(zeros)}${id}`;
        if (text.length <= 19) expect(parseId(text)).toBe(id);
        else expectRefused(() => parseId(text), 'id');
      }),
    );
  });

  it('refuses 0, negatives and ids over 2^63-1, naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt(-MAX_INT64 * 4n, 0n), fc.bigInt(MAX_INT64 + 1n, MAX_INT64 * 1000n)),
        fc.constantFrom('id', 'petId', 'categoryId'),
        (id, field) => expectRefused(() => parseId(String(id), field), field, new RegExp(`^${field} must be`)),
      ),
      { numRuns: 300 },
    );
  });

  it('refuses anything that is not plain decimal digits, naming the field, without echoing it whole', () => {
    const notDigits = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 50 }),
      fc.string({ unit: 'binary', minLength: 1_000, maxLength: 5_000 }),
      fc.double().map(String),
      fc.constantFrom('1.5', '1e3', '0x1f', '+1', '-0', '1_000', '١٢٣', '１２', '1 2', "1' OR '1'='1", '1\u0000'),
    );
    fc.assert(
      fc.property(notDigits, fc.constantFrom('id', 'petId', 'categoryId'), (value, field) => {
        fc.pre(!/^\s*\d{1,19}\s*$/.test(value));
        expectRefused(() => parseId(value, field), field);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses numbers that are not whole, or not safe to read as ids', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: false }), (value) => {
        fc.pre(!(Number.isInteger(value) && value >= 1 && value <= Number.MAX_SAFE_INTEGER));
        expectRefused(() => parseId(value), 'id');
      }),
      { numRuns: 300 },
    );
  });
});
