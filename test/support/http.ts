import { expect } from 'vitest';
import type { PrismaClient } from '../../src/database/client.js';
import { errorStatus } from '../../src/errors.js';

/**
 * Plain HTTP for the security tests: requests exactly as written (no token
 * unless given), answers with their status, headers and parsed body, and the
 * checks every error answer must pass.
 */

export interface Answer<B = Record<string, unknown>> {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, when it is JSON; a GraphQL answer's `extensions.cost` is in `cost`. */
  body: B;
  /** A GraphQL answer's `extensions.cost` (docs/api.md, "What a request costs"). */
  cost?: { estimated: number; actual: number; budgetLeft?: number };
}

/**
 * A GraphQL answer as the tests of what it holds compare it: `extensions.cost`, which every
 * executed answer carries, is checked for its shape and taken out (returned beside it), so an
 * answer equals its data and errors. test/security/demand-control.test.ts checks its numbers.
 */
export function withoutCost<B>(body: B): { body: B; cost?: Answer['cost'] } {
  const extensions = (body as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  if (!extensions || typeof extensions !== 'object' || !('cost' in extensions)) return { body };
  const { cost, ...others } = extensions;
  expect(cost).toMatchObject({ estimated: expect.any(Number), actual: expect.any(Number) });
  const rest = { ...(body as object) } as { extensions?: Record<string, unknown> };
  if (Object.keys(others).length > 0) rest.extensions = others;
  else delete rest.extensions;
  return { body: rest as B, cost: cost as Answer['cost'] };
}

export async function send<B = Record<string, unknown>>(
  baseUrl: string,
  path: string,
  init: RequestInit = {},
): Promise<Answer<B>> {
  const response = await fetch(`${baseUrl}${path}`, init);
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const parsed = (/json/.test(contentType) && text !== '' ? JSON.parse(text) : undefined) as B;
  const { body, cost } = Array.isArray(parsed) ? { body: parsed.map((item) => withoutCost(item).body) as B, cost: undefined } : withoutCost(parsed);
  return { status: response.status, headers: response.headers, text, body, ...(cost ? { cost } : {}) };
}

/** POST /graphql with a JSON body; `headers` decide authorization and accept. */
export function postGraphQL<B = GraphQLAnswer>(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<B>> {
  return send<B>(baseUrl, '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface GraphQLAnswer<D = Record<string, unknown>> {
  data?: D | null;
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
  extensions?: Record<string, unknown>;
  /** Present on refusals made before GraphQL ran (the spec's Error object). */
  code?: string;
  message?: string;
  status?: number;
  requestId?: string;
}

/**
 * A refusal made before GraphQL ran (401, 413, 429, 503): the HTTP status, the
 * spec's Error body with the request id of the X-Request-Id header, and on
 * /graphql the same error as a GraphQL error.
 */
export function expectRefusal(answer: Answer<GraphQLAnswer>, code: string, status: number, graphql = true) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = answer.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(answer.body).toMatchObject({ code, status, requestId });
  expect(typeof answer.body.message).toBe('string');
  if (graphql) {
    expect(answer.body.errors).toEqual([{ message: answer.body.message, extensions: { code, status } }]);
    expect(answer.body.extensions).toEqual({ requestId });
    expect(answer.body).not.toHaveProperty('data');
  }
}

/**
 * A GraphQL answer failing with errors of `code` (each carrying its status),
 * and the request id of the X-Request-Id header in the answer's extensions.
 */
export function expectGraphQLError(answer: Answer<GraphQLAnswer>, code: string, status: number) {
  const errors = answer.body?.errors;
  expect(errors?.length, answer.text).toBeGreaterThan(0);
  for (const error of errors!) expect(error.extensions, answer.text).toMatchObject({ code, status });
  expect(answer.body.extensions?.requestId).toBe(answer.headers.get('x-request-id'));
  return errors![0]!;
}

/** Every row the gateway can write, to compare before and after a refused request. */
export async function databaseState(prisma: PrismaClient): Promise<string> {
  const [categories, pets, orders, inventory] = await Promise.all([
    prisma.category.findMany({ orderBy: { id: 'asc' } }),
    prisma.pet.findMany({ orderBy: { id: 'asc' } }),
    prisma.order.findMany({ orderBy: { id: 'asc' } }),
    prisma.inventoryItem.findMany({ orderBy: { petId: 'asc' } }),
  ]);
  return JSON.stringify({ categories, pets, orders, inventory }, (_key, value) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

/** Every documented error code (src/errors.ts). */
const documentedCodes = Object.keys(errorStatus);

/**
 * A documented error: every GraphQL error (or the Error body) carries a known
 * code with its status, and the answer carries the request id of X-Request-Id.
 */
export function expectDocumentedError(answer: Answer<GraphQLAnswer>, code?: string) {
  const requestId = answer.headers.get('x-request-id');
  expect(requestId, answer.text).toMatch(/^[\w.:-]{1,128}$/);
  expect(answer.headers.get('content-type'), answer.text).toMatch(/^application\/(graphql-response\+)?json/);
  const body = answer.body;
  if (body.code !== undefined) {
    // An Error body (refused before GraphQL ran, or REST).
    expect(documentedCodes).toContain(body.code);
    expect(body.status).toBe(errorStatus[body.code as keyof typeof errorStatus]);
    expect(body.status).toBe(answer.status);
    expect(body.requestId).toBe(requestId);
    if (code) expect(body.code).toBe(code);
    return body.code;
  }
  const errors = Array.isArray(body) ? body.flatMap((item: GraphQLAnswer) => item.errors ?? []) : body.errors;
  expect(errors?.length, answer.text).toBeGreaterThan(0);
  for (const error of errors!) {
    const errorCode = error.extensions?.code as keyof typeof errorStatus;
    expect(documentedCodes, answer.text).toContain(errorCode);
    expect(error.extensions?.status).toBe(errorStatus[errorCode]);
    if (code) expect(errorCode, answer.text).toBe(code);
  }
  const ids = Array.isArray(body) ? body.map((item: GraphQLAnswer) => item.extensions?.requestId) : [body.extensions?.requestId];
  for (const id of ids) expect(id).toBe(requestId);
  expect(answer.text).not.toMatch(/\bat .*\.(ts|js):\d+|node_modules|Prisma|SELECT |INSERT /);
  return errors![0]!.extensions?.code as string;
}
