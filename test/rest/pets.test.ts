import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { restClient } from '../support/rest.js';

const gateway = useTestGateway();
const rest = restClient(gateway);

const MAX_INT64 = 9223372036854775807n;
const ABOVE_2_53 = 9007199254740993n; // 2^53 + 1: the first integer a double cannot hold

let dogs: bigint;
let rex: bigint;

beforeAll(async () => {
  dogs = (await gateway.prisma.category.create({ data: { name: 'Dogs' } })).id;
  rex = (await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: dogs } })).id;
  const bigIds = await gateway.prisma.category.create({ data: { id: ABOVE_2_53, name: 'Big ids' } });
  await gateway.prisma.pet.create({ data: { id: MAX_INT64, name: 'Max', categoryId: bigIds.id } });
});

/** The headers every answer of the deprecated route carries. */
function expectLegacyNotice(headers: Headers) {
  expect(headers.get('deprecation')).toBe(`@${Date.UTC(2026, 10, 21) / 1000}`);
  expect(headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
  expect(headers.get('link')).toBe('</graphql>; rel="successor-version", </openapi.json>; rel="sunset"');
}

function expectError(response: { status: number; headers: Headers; body: unknown }, code: string, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(Object.keys(response.body as object)).toEqual(['code', 'message', 'status', 'requestId']);
  expect((response.body as { requestId: string }).requestId).toBe(response.headers.get('x-request-id'));
  expect(response.body).toMatchObject({ code, status });
}

describe('GET /pets/{petId}', () => {
  it('answers the spec Pet as JSON, with the deprecation headers', async () => {
    const response = await rest.get(`/pets/${rex}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.text).toBe(`{"id":${rex},"name":"Rex","categoryId":${dogs},"status":"available"}`);
    expectLegacyNotice(response.headers);
    expect(response.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('writes the status in the spec lowercase values', async () => {
    for (const status of ['pending', 'sold'] as const) {
      const pet = await gateway.prisma.pet.create({ data: { name: `A ${status} pet`, categoryId: dogs, status } });
      const response = await rest.get(`/pets/${pet.id}`);
      expect(response.body).toEqual({ id: Number(pet.id), name: `A ${status} pet`, categoryId: Number(dogs), status });
    }
  });

  it('writes int64 ids above 2^53 digit for digit', async () => {
    const response = await rest.get(`/pets/${MAX_INT64}`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(
      '{"id":9223372036854775807,"name":"Max","categoryId":9007199254740993,"status":"available"}',
    );
    // What a lossy Number would have written instead.
    expect(response.text).not.toContain('9223372036854776000');
    expect(response.text).not.toContain('9007199254740992');
  });

  it('escapes names as JSON strings', async () => {
    const name = 'Rex "the" \\ dog 🐕 \n';
    const pet = await gateway.prisma.pet.create({ data: { name, categoryId: dogs } });
    const response = await rest.get(`/pets/${pet.id}`);
    expect((response.body as { name: string }).name).toBe(name);
  });

  it('echoes the caller request id', async () => {
    const response = await rest.get(`/pets/${rex}`, { 'x-request-id': 'legacy-caller-42' });
    expect(response.headers.get('x-request-id')).toBe('legacy-caller-42');
  });
});

describe('HEAD and conditional requests', () => {
  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await rest.get(`/pets/${rex}`);
    const head = await rest.request(`/pets/${rex}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expectLegacyNotice(head.headers);
  });

  it('answers 304 with no body while If-None-Match holds the current ETag', async () => {
    const { headers } = await rest.get(`/pets/${rex}`);
    const etag = headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await rest.get(`/pets/${rex}`, { 'if-none-match': ifNoneMatch });
      expect(response.status, ifNoneMatch).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.get('etag')).toBe(etag);
      expectLegacyNotice(response.headers);
    }
    const head = await rest.request(`/pets/${rex}`, { method: 'HEAD', headers: { 'if-none-match': etag } });
    expect(head.status).toBe(304);
    expect((await rest.get(`/pets/${rex}`, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('gives a changed pet a new ETag', async () => {
    const pet = await gateway.prisma.pet.create({ data: { name: 'Before', categoryId: dogs } });
    const before = (await rest.get(`/pets/${pet.id}`)).headers.get('etag')!;
    await gateway.prisma.pet.update({ where: { id: pet.id }, data: { name: 'After' } });
    const after = await rest.get(`/pets/${pet.id}`, { 'if-none-match': before });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect((after.body as { name: string }).name).toBe('After');
  });
});

describe('errors of GET /pets/{petId}', () => {
  it.each([
    ['abc', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "abc".'],
    ['0', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "0".'],
    ['9223372036854775808', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "9223372036854775808".'],
    ['99999999999999999999', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "99999999999999999999".'],
    ['-1', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "-1".'],
    ['1.5', 'petId must be a whole number from 1 to 9223372036854775807 (an int64 id), got "1.5".'],
  ])('answers 400 VALIDATION_FAILED naming petId for %s', async (petId, message) => {
    const response = await rest.get(`/pets/${petId}`);
    expectError(response, 'VALIDATION_FAILED', 400);
    expect(response.body).toEqual({
      code: 'VALIDATION_FAILED',
      message,
      status: 400,
      requestId: response.headers.get('x-request-id'),
    });
    expectLegacyNotice(response.headers);
  });

  it('answers 404 NOT_FOUND for an unknown pet', async () => {
    const response = await rest.get('/pets/424242');
    expect(response.body).toEqual({
      code: 'NOT_FOUND',
      message: 'Pet 424242 does not exist.',
      status: 404,
      requestId: response.headers.get('x-request-id'),
    });
    expectError(response, 'NOT_FOUND', 404);
    expectLegacyNotice(response.headers);
  });

  it('answers 405 with Allow for any other method', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const response = await rest.request(`/pets/${rex}`, { method });
      expectError(response, 'METHOD_NOT_ALLOWED', 405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect((response.body as { message: string }).message).toBe(
        `${method} is not allowed on /pets/${rex}; it answers GET, HEAD.`,
      );
    }
  });

  it('answers 406 when the caller accepts no JSON', async () => {
    for (const accept of ['text/html', 'application/xml, text/*', 'application/json;q=0, */*']) {
      const response = await rest.get(`/pets/${rex}`, { accept });
      expectError(response, 'NOT_ACCEPTABLE', 406);
      expect(response.headers.get('vary')).toBe('Accept');
    }
    for (const accept of ['application/json', 'application/*', '*/*', 'text/html, */*;q=0.1', 'APPLICATION/JSON']) {
      expect((await rest.get(`/pets/${rex}`, { accept })).status, accept).toBe(200);
    }
  });

  it('uses the code and status GraphQL gives the same bad id', async () => {
    const rest400 = await rest.get('/pets/abc');
    const graphql = await gateway.graphql('{ pet(id: "abc") { id } }');
    const extensions = graphql.errors?.[0]?.extensions;
    expect(extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(rest400.body).toMatchObject({ code: extensions?.code, status: extensions?.status });
  });
});

describe('answers the GraphQL replacement gives', () => {
  it('returns the same pet as pet(id:) and getPetById(petId:)', async () => {
    const graphql = await gateway.graphql<{ pet: Record<string, string>; getPetById: Record<string, string> }>(
      `query ($id: ID!) {
        pet(id: $id) { id name categoryId status }
        getPetById(petId: $id) { id name categoryId status }
      }`,
      { id: String(MAX_INT64) },
    );
    const response = await rest.get(`/pets/${MAX_INT64}`);
    const restPet = JSON.parse(response.text.replace(/(":)(\d+)/g, '$1"$2"')) as Record<string, string>;
    for (const pet of [graphql.data!.pet, graphql.data!.getPetById]) {
      expect({ ...pet, status: pet.status!.toLowerCase() }).toEqual(restPet);
    }
  });
});

describe('an unexpected failure', () => {
  it('answers 500 INTERNAL with a masked message', async () => {
    await gateway.prisma.$executeRawUnsafe('ALTER TABLE pets RENAME TO pets_away');
    try {
      const response = await rest.get(`/pets/${rex}`);
      expectError(response, 'INTERNAL', 500);
      expect((response.body as { message: string }).message).toBe(
        'Something went wrong on our side. Quote the request id when reporting it.',
      );
      expect(response.text).not.toMatch(/pets|relation|prisma|table/i);
      expectLegacyNotice(response.headers);
    } finally {
      await gateway.prisma.$executeRawUnsafe('ALTER TABLE pets_away RENAME TO pets');
    }
  });
});
