import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits } from '../../src/config.js';
import { CONTRACT_DIR } from '../../src/contract/baseline.js';
import { type ErrorCode, errorStatus } from '../../src/errors.js';
import { declaredErrorCodes } from '../../src/http/transports/openapi.js';
import { useTestGateway } from '../support/gateway.js';
import { type Answer, answerChecker, type OpenApiDocument, restClient } from '../support/rest.js';

const gateway = useTestGateway();
const rest = restClient(gateway);

let document: OpenApiDocument;

beforeAll(async () => {
  const response = await rest.get('/openapi.json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  document = response.body as OpenApiDocument;
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.0.3 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.0');
    expect(document.openapi).toBe('3.0.3');
    // The version of the last release of the REST routes' own contract.
    expect(document.info.version).toBe(JSON.parse(await readFile(path.join(CONTRACT_DIR, 'release.json'), 'utf8')).openapi.version);
    const broken = structuredClone(document) as unknown as { paths: Record<string, { get: object }> };
    broken.paths['/pets/{petId}']!.get = { ...broken.paths['/pets/{petId}']!.get, deprecated: 'yes' };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('describes exactly the two legacy routes, GET and HEAD', () => {
    expect(Object.keys(document.paths)).toEqual(['/pets/{petId}', '/store/orders']);
    for (const path of Object.values(document.paths)) {
      expect(Object.keys(path).filter((key) => key !== 'parameters')).toEqual(['get', 'head']);
    }
  });

  it('marks GET /pets/{petId} deprecated with its sunset date', () => {
    const { get, head } = document.paths['/pets/{petId}'];
    for (const operation of [get, head]) {
      expect(operation.deprecated).toBe(true);
      expect(operation['x-sunset']).toBe('2027-06-30');
      expect(operation.description).toContain('Sunset date: 2027-06-30');
      expect(operation.description).toContain('pet(id:)');
    }
    expect(document.paths['/store/orders'].get).not.toHaveProperty('deprecated');
  });

  it('has the spec schemas', () => {
    const { schemas } = document.components;
    expect(Object.keys(schemas).sort()).toEqual(['Error', 'Order', 'Pet', 'PetStatus']);
    expect(schemas.PetStatus.enum).toEqual(['available', 'pending', 'sold']);
    expect(Object.keys(schemas.Pet.properties)).toEqual(['id', 'name', 'categoryId', 'status']);
    expect(schemas.Pet.required).toEqual(['id', 'name', 'categoryId']);
    expect(Object.keys(schemas.Order.properties)).toEqual(['id', 'petId', 'quantity', 'shipDate', 'complete']);
    expect(schemas.Order).not.toHaveProperty('required');
    expect(schemas.Error.required).toEqual(['code', 'message', 'status']);
    for (const id of [schemas.Pet.properties.id, schemas.Order.properties.id, schemas.Order.properties.petId]) {
      expect(id).toMatchObject({ type: 'integer', format: 'int64' });
    }
  });

  it('documents the error answers of each operation', () => {
    expect(Object.keys(document.paths['/pets/{petId}'].get.responses)).toEqual([
      '200',
      '304',
      '400',
      '401',
      '404',
      '406',
      '410',
      '413',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(document.paths['/store/orders'].get.responses)).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '406',
      '413',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(document.components.responses)).toEqual(['NotFound', 'MethodNotAllowed']);
  });

  it('lists in the Error enum exactly the codes its responses declare, each under its own status', () => {
    const operations = Object.values(document.paths as Record<string, Record<string, { responses?: object }>>).flatMap(
      (pathItem) => Object.values(pathItem).filter((operation) => operation.responses !== undefined),
    );
    const responses: Array<[string | undefined, { description: string }]> = [
      ...operations.flatMap((operation) => Object.entries(operation.responses as Record<string, { description: string }>)),
      // Named by the answers to requests the document does not list; their status is in their name.
      ...Object.values(document.components.responses).map((response): [undefined, { description: string }] => [undefined, response]),
    ];
    const declared = new Set<string>();
    for (const [status, response] of responses) {
      for (const code of declaredErrorCodes(response.description)) {
        declared.add(code);
        expect(code in errorStatus, `${code} is an error code`).toBe(true);
        if (status !== undefined) expect(errorStatus[code as ErrorCode], `${code} documented under ${status}`).toBe(Number(status));
      }
    }
    // Every error answer declares its codes.
    for (const [status, response] of responses) {
      if (status === undefined || Number(status) >= 400) expect(declaredErrorCodes(response.description), response.description).not.toEqual([]);
    }
    const listed = document.components.schemas.Error.properties.code.enum;
    expect(listed).toEqual(Object.keys(errorStatus).filter((code) => declared.has(code)));
    // GraphQL's own codes are not REST's: no REST route runs a persisted query.
    expect(listed).not.toContain('PERSISTED_QUERY_NOT_FOUND');
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE, as it documents for every operation', async () => {
    const check = answerChecker(document);
    const body = 'x'.repeat(defaultLimits.bodyBytes + 1);
    for (const route of ['/pets/1', '/store/orders']) {
      // fetch sends no body with GET; node:http does, as any HTTP client may.
      const answer = await new Promise<Answer>((resolve, reject) => {
        const outgoing = httpRequest(`${gateway.baseUrl}${route}`, { method: 'GET', headers: { 'content-length': String(body.length) } }, (incoming) => {
          let text = '';
          incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          incoming.on('end', () => {
            const headers = new Headers(Object.entries(incoming.headers).map(([name, value]): [string, string] => [name, String(value)]));
            resolve({ method: 'GET', path: route, status: incoming.statusCode!, headers, text, body: JSON.parse(text) });
          });
        });
        outgoing.on('error', reject).end(body);
      });
      expect(answer.status, route).toBe(413);
      expect(answer.body, route).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
      expect(check(answer), route).toEqual([]);
    }
  });

  it('answers HEAD, If-None-Match, other methods and Accept like the routes it describes', async () => {
    const get = await rest.get('/openapi.json');
    const etag = get.headers.get('etag')!;
    const head = await rest.request('/openapi.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
    expect((await rest.get('/openapi.json', { 'if-none-match': etag })).status).toBe(304);
    const post = await rest.request('/openapi.json', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const xml = await rest.get('/openapi.json', { accept: 'application/xml' });
    expect(xml.body).toMatchObject({ code: 'NOT_ACCEPTABLE', status: 406 });
  });
});

describe('the response check the REST tests rely on', () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  const petHeaders = {
    'content-type': 'application/json',
    'x-request-id': 'r1',
    deprecation: '@1795219200',
    sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
    link: '</graphql>; rel="successor-version", </openapi.json>; rel="sunset"',
    etag: '"abc"',
  };
  const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' };
  const answer = (overrides: Partial<Answer>): Answer => ({
    method: 'GET',
    path: '/pets/1',
    status: 200,
    headers: headers(petHeaders),
    text: JSON.stringify(pet),
    body: pet,
    ...overrides,
  });

  it('accepts a conforming answer and rejects each kind of deviation', () => {
    const check = answerChecker(document);
    expect(check(answer({}))).toEqual([]);
    expect(check(answer({ body: { ...pet, status: 'AVAILABLE' } }))[0]).toMatch(/^body:/);
    expect(check(answer({ body: { ...pet, id: '1' } }))[0]).toMatch(/^body:/);
    expect(check(answer({ body: { name: 'Rex' } }))[0]).toMatch(/^body:/);
    const { sunset: _sunset, ...withoutSunset } = petHeaders;
    expect(check(answer({ headers: headers(withoutSunset) }))).toEqual(['header Sunset is missing']);
    expect(check(answer({ headers: headers({ ...petHeaders, deprecation: '2026-11-21' }) }))[0]).toMatch(
      /^header Deprecation/,
    );
    expect(check(answer({ status: 201 }))).toEqual(['status 201 is not documented for GET /pets/{petId}']);
    expect(check(answer({ headers: headers({ ...petHeaders, 'content-type': 'text/plain' }) }))).toEqual([
      'content type text/plain is not documented',
    ]);
    expect(check(answer({ method: 'HEAD' }))[0]).toMatch(/^a body was sent/);
    expect(check(answer({ path: '/pets', status: 200 }))).toEqual(['an undocumented path answered 200, not 404']);
    const order = { id: 1, petId: 1, shipDate: null };
    const orders = answer({
      path: '/store/orders',
      headers: headers({ 'content-type': 'application/json', 'x-request-id': 'r1', etag: '"abc"' }),
      body: [order],
      text: JSON.stringify([order]),
    });
    expect(check(orders)).toEqual([expect.stringMatching(/^body:.*shipDate/)]);
    const error = { code: 'NO_SUCH_CODE', message: 'x', status: 404 };
    expect(check(answer({ status: 404, body: error, text: JSON.stringify(error) }))).toContainEqual(expect.stringMatching(/^body:.*code/));
    // A code of the enum, but not one this response declares.
    const gone = { code: 'GONE', message: 'x', status: 404 };
    expect(check(answer({ status: 404, body: gone, text: JSON.stringify(gone) }))).toEqual([
      'code GONE is not among the codes of this response: NOT_FOUND',
    ]);
  });
});
