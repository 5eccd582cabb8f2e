import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { declaredErrorCodes, type openApiDocument } from '../../src/http/transports/openapi.js';
import { OPENAPI_PATH } from '../../src/http/routes.js';
import type { TestGateway } from './gateway.js';

/**
 * A REST client for the tests that checks every answer it receives against
 * the gateway's own OpenAPI document (GET /openapi.json): the status must be
 * documented for the operation, the documented headers present and matching
 * their schemas, the body matching its schema, and an error's code one its
 * response declares.
 */

export interface RestResponse {
  status: number;
  headers: Headers;
  /** The body exactly as sent. */
  text: string;
  /** The body parsed, when it is JSON. */
  body: unknown;
}

export interface RestClient {
  request(path: string, init?: RequestInit): Promise<RestResponse>;
  get(path: string, headers?: Record<string, string>): Promise<RestResponse>;
  /** The OpenAPI document the gateway serves. */
  document(): Promise<OpenApiDocument>;
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;

type Json = Record<string, unknown>;

// ajv-formats is CommonJS; its plugin is the module itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function restClient(gateway: TestGateway): RestClient {
  let loaded: Promise<{ document: OpenApiDocument; check: AnswerChecker }> | undefined;

  const load = () =>
    (loaded ??= (async () => {
      const response = await fetch(`${gateway.baseUrl}/openapi.json`);
      expect(response.status).toBe(200);
      const document = (await response.json()) as OpenApiDocument;
      return { document, check: answerChecker(document) };
    })());

  const request = async (path: string, init: RequestInit = {}): Promise<RestResponse> => {
    const { check } = await load();
    // Authenticated with every scope unless the test sends its own Authorization (or `authorization: ''`).
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', (await gateway.authorization()).authorization!);
    if (headers.get('authorization') === '') headers.delete('authorization');
    const response = await fetch(`${gateway.baseUrl}${path}`, { ...init, headers });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const body = contentType.startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined;
    const method = (init.method ?? 'GET').toUpperCase();
    const problems = check({ method, path, status: response.status, headers: response.headers, text, body });
    expect(problems, `${method} ${path} → ${response.status} ${text}`).toEqual([]);
    return { status: response.status, headers: response.headers, text, body };
  };

  return {
    request,
    get: (path, headers = {}) => request(path, { headers }),
    document: async () => (await load()).document,
  };
}

export interface Answer {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** JSON pointer of `segments`, as a URI fragment Ajv resolves. */
const pointer = (segments: string[]) =>
  `openapi#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

/** What is wrong with an answer according to `document`; nothing when it conforms. */
export type AnswerChecker = (answer: Answer) => string[];

export function answerChecker(document: OpenApiDocument): AnswerChecker {
  // OpenAPI 3.0 schema objects carry `example` and `x-` keys that plain JSON Schema does not know.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');
  return (answer) => checkAgainstDocument(document, ajv, answer);
}

function checkAgainstDocument(document: OpenApiDocument, ajv: Ajv, answer: Answer): string[] {
  const root = document as unknown as Json;
  const resolve = (value: Json): Json => {
    const target = value.$ref;
    if (typeof target !== 'string') return value;
    return target
      .slice(2)
      .split('/')
      .reduce<Json>((node, key) => node[key] as Json, root);
  };

  const pathname = new URL(answer.path, 'http://gateway').pathname;
  if (pathname === OPENAPI_PATH && answer.status !== 405) return checkDocumentAnswer(ajv, answer);
  const template = Object.keys(document.paths).find((candidate) =>
    new RegExp(`^${candidate.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
  );

  // Where the documented response lives, as pointer segments from the document root.
  let location: string[];
  if (pathname === OPENAPI_PATH) {
    location = ['components', 'responses', 'MethodNotAllowed'];
  } else if (template === undefined) {
    if (answer.status !== 404) return [`an undocumented path answered ${answer.status}, not 404`];
    location = ['components', 'responses', 'NotFound'];
  } else {
    const operation = (document.paths as Record<string, Json>)[template]![answer.method.toLowerCase()] as
      | Json
      | undefined;
    if (operation === undefined) {
      if (answer.status !== 405) {
        return [`${answer.method} is not documented on ${template} but answered ${answer.status}`];
      }
      location = ['components', 'responses', 'MethodNotAllowed'];
    } else {
      const responses = operation.responses as Json;
      if (!(String(answer.status) in responses)) {
        return [`status ${answer.status} is not documented for ${answer.method} ${template}`];
      }
      location = ['paths', template, answer.method.toLowerCase(), 'responses', String(answer.status)];
    }
  }
  const response = resolve(location.reduce<Json>((node, key) => node[key] as Json, root));

  const problems: string[] = [];
  for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const header = resolve(declared);
    const value = answer.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`header ${name} is missing`);
      continue;
    }
    if (!ajv.validate(header.schema as Json, value)) {
      problems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText()}`);
    }
  }

  // An Error response names the codes it answers with: any other code is an answer the document does not describe.
  const declared = declaredErrorCodes(String(response.description));
  const code = (answer.body as { code?: unknown } | undefined)?.code;
  if (declared.length > 0 && answer.method !== 'HEAD' && !declared.includes(String(code))) {
    problems.push(`code ${String(code)} is not among the codes of this response: ${declared.join(', ')}`);
  }

  const content = response.content as Record<string, Json> | undefined;
  if (answer.method === 'HEAD' || content === undefined) {
    if (answer.text !== '') problems.push(`a body was sent where none is documented: ${answer.text.slice(0, 80)}`);
    return problems;
  }
  const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!(mediaType in content)) {
    problems.push(`content type ${mediaType || '(none)'} is not documented`);
    return problems;
  }
  const validateBody = ajv.getSchema(pointer([...location, 'content', mediaType, 'schema']));
  if (!validateBody) problems.push('the documented body schema could not be compiled');
  else if (!validateBody(answer.body)) problems.push(`body: ${ajv.errorsText(validateBody.errors)}`);
  return problems;
}

/**
 * The document describes the REST routes, not itself: its own answers are
 * JSON (the document, which the OpenAPI validator checks, or an Error body).
 */
function checkDocumentAnswer(ajv: Ajv, answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status === 200 || answer.status === 304) {
    if (!answer.headers.get('etag')) problems.push('header ETag is missing');
    if (answer.status === 304 || answer.method === 'HEAD') {
      if (answer.text !== '') problems.push('a body was sent where none belongs');
    } else if ((answer.body as { openapi?: string } | undefined)?.openapi !== '3.0.3') {
      problems.push('the body is not an OpenAPI 3.0.3 document');
    }
    return problems;
  }
  if (answer.method !== 'HEAD' && !ajv.validate({ $ref: 'openapi#/components/schemas/Error' }, answer.body)) {
    problems.push(`body: ${ajv.errorsText()}`);
  }
  return problems;
}
