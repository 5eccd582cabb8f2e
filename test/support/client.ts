import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, print } from 'graphql';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import type { GraphQLAnswer } from './http.js';

/**
 * Sends the typed documents that `npm run schema:print` generates from
 * test/documents/*.graphql, as a frontend app would: the operation text is
 * printed from the document, and the answer is typed by it.
 */

const printed = new WeakMap<DocumentNode, string>();

function source(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

/** Variables may be left out only when the operation has none that are required. */
type VariablesArg<V> = Record<string, never> extends V ? [variables?: V] : [variables: V];

export interface GraphQLClient {
  /** Sends a typed operation with variables of its type. */
  send<R, V>(document: TypedDocumentNode<R, V>, ...variables: VariablesArg<V>): Promise<GraphQLAnswer<R>>;
  /** Sends a typed operation with any variables, for the inputs a typed client would never send. */
  sendUnchecked<R, V>(
    document: TypedDocumentNode<R, V>,
    variables: Record<string, unknown>,
  ): Promise<GraphQLAnswer<R>>;
  /** Sends a typed operation that must succeed, and returns its data. */
  ok<R, V>(document: TypedDocumentNode<R, V>, ...variables: VariablesArg<V>): Promise<R>;
}

export function clientFor(gateway: TestGateway): GraphQLClient {
  const send = <R, V>(document: TypedDocumentNode<R, V>, variables?: unknown) =>
    gateway.graphql<R>(source(document), variables as Record<string, unknown> | undefined);
  return {
    send: (document, ...[variables]) => send(document, variables),
    sendUnchecked: (document, variables) => send(document, variables),
    async ok(document, ...[variables]) {
      const response = await send(document, variables);
      expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
      expect(response.data).toBeTruthy();
      return response.data!;
    },
  };
}

/** The HTTP status each documented error code carries (the REST Error body's pair). */
export const expectedStatus = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INSUFFICIENT_STOCK: 409,
  INTERNAL: 500,
  TIMEOUT: 503,
} as const;

export type ExpectedCode = keyof typeof expectedStatus;

/**
 * Asserts the response failed with exactly one error of `code` (and its
 * status), naming `field` when given, and returns that error.
 */
export function expectError(
  response: GraphQLAnswer<unknown>,
  code: ExpectedCode,
  field?: string,
): { message: string; path?: string[]; extensions?: Record<string, unknown> } {
  expect(response.errors, JSON.stringify(response)).toHaveLength(1);
  const error = response.errors![0]!;
  expect(error.extensions, JSON.stringify(error)).toMatchObject({ code, status: expectedStatus[code] });
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  if (field !== undefined) expect(error.extensions?.field, JSON.stringify(error)).toBe(field);
  return error;
}

/** What each response came to: `OK`, or the code of its first error (for requests sent at the same time). */
export const codesOf = (responses: Array<{ errors?: Array<{ extensions?: Record<string, unknown> }> }>) =>
  responses.map((response) => (response.errors ? String(response.errors[0]?.extensions?.code) : 'OK'));
