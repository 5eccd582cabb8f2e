import { expect } from 'vitest';
import type { OpenApiDocument } from '../../src/contract/current.js';

/**
 * Fixtures for the contract check: the released baseline with one change
 * made to it, each made by an edit that must find what it edits (so a
 * fixture cannot silently stop changing anything).
 */

/** `sdl` with `from` replaced by `to`; fails when `from` is not there. */
export function editSdl(sdl: string, from: string | RegExp, to: string): string {
  const edited = sdl.replace(from, to);
  expect(edited, `the fixture's edit of ${String(from)}`).not.toBe(sdl);
  return edited;
}

/** A copy of `document` changed by `change`. */
export function editDocument(document: OpenApiDocument, change: (copy: OpenApiJson) => void): OpenApiDocument {
  const copy = structuredClone(document) as unknown as OpenApiJson;
  change(copy);
  expect(copy, 'the fixture changes the document').not.toEqual(document);
  return copy as unknown as OpenApiDocument;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OpenApiJson = Record<string, any>;
