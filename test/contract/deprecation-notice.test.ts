import { beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, useTestGateway } from '../support/gateway.js';
import { type GraphQLAnswer, postGraphQL, send } from '../support/http.js';

/**
 * An answer that used a deprecated field says so: `extensions.deprecations`
 * (field, reason, sunset date) in the body, `Deprecation` (RFC 9745) and
 * `Sunset` (RFC 8594) in the headers; answers that used none say nothing.
 */

const gateway = useTestGateway();
const moved = useTestGateway({ legacySunsetDate: '2028-01-31' });

const DEFAULT_SUNSET_HEADERS = { deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`, sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' };

let petId: string;

beforeAll(async () => {
  for (const target of [gateway, moved]) {
    const category = await target.prisma.category.create({ data: { name: 'Cats' } });
    petId = (await target.prisma.pet.create({ data: { name: 'Tom', categoryId: category.id } })).id.toString();
  }
});

const ask = (query: string, variables?: object, operationName?: string, target: TestGateway = gateway) =>
  postGraphQL(target.baseUrl, { query, variables, operationName }, { accept: 'application/graphql-response+json, application/json' });

const legacyEntry = (sunset: string) => ({
  field: 'Query.getPetById',
  reason: `Use pet(id:) instead. getPetById will be removed on ${sunset} (sunset date).`,
  sunset,
});

describe('an answer that used a deprecated field', () => {
  it('lists it in extensions.deprecations and carries Deprecation and Sunset headers', async () => {
    const answer = await ask('query Legacy($id: ID!) { getPetById(petId: $id) { id name } }', { id: petId });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      data: { getPetById: { id: petId, name: 'Tom' } },
      extensions: { deprecations: [legacyEntry('2027-06-30')] },
    });
    expect(answer.headers.get('deprecation')).toBe(DEFAULT_SUNSET_HEADERS.deprecation);
    expect(answer.headers.get('sunset')).toBe(DEFAULT_SUNSET_HEADERS.sunset);
  });

  it('names each field once, however often and through whatever fragment it is selected', async () => {
    const answer = await ask(
      'query Twice($id: ID!) { a: getPetById(petId: $id) { id } ...Legacy } fragment Legacy on Query { b: getPetById(petId: $id) { name } }',
      { id: petId },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.extensions).toEqual({ deprecations: [legacyEntry('2027-06-30')] });
    expect(answer.headers.get('sunset')).toBe(DEFAULT_SUNSET_HEADERS.sunset);
  });

  it('says so also over GET, and with the sunset date the gateway is configured with', async () => {
    const query = encodeURIComponent('{ getPetById(petId: "1") { id } }');
    const response = await send<GraphQLAnswer>(moved.baseUrl, `/graphql?query=${query}`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.body.extensions).toEqual({ deprecations: [legacyEntry('2028-01-31')] });
    expect(response.headers.get('sunset')).toBe('Mon, 31 Jan 2028 00:00:00 GMT');
    expect(response.headers.get('deprecation')).toBe(DEFAULT_SUNSET_HEADERS.deprecation);
  });

  it('says so even when the lookup fails, as its use is what the notice is about', async () => {
    const answer = await ask('{ getPetById(petId: "not-an-id") { id } }');
    expect(answer.body.errors).toHaveLength(1);
    // Beside the request id that every answer with errors carries.
    expect(answer.body.extensions?.deprecations).toEqual([legacyEntry('2027-06-30')]);
    expect(answer.headers.get('deprecation')).toBe(DEFAULT_SUNSET_HEADERS.deprecation);
  });
});

describe('an answer that used no deprecated field', () => {
  it('has neither the extension nor the headers', async () => {
    const answer = await ask('query Current($id: ID!) { pet(id: $id) { id name } }', { id: petId });
    expect(answer.body).toEqual({ data: { pet: { id: petId, name: 'Tom' } } });
    expect(answer.headers.get('deprecation')).toBeNull();
    expect(answer.headers.get('sunset')).toBeNull();
  });

  it('is judged by the operation that ran, not by others in the same document', async () => {
    const document = 'query Old($id: ID!) { getPetById(petId: $id) { id } } query New($id: ID!) { pet(id: $id) { id } }';
    const current = await ask(document, { id: petId }, 'New');
    expect(current.body).toEqual({ data: { pet: { id: petId } } });
    expect(current.headers.get('sunset')).toBeNull();
    const legacy = await ask(document, { id: petId }, 'Old');
    expect(legacy.body.extensions).toEqual({ deprecations: [legacyEntry('2027-06-30')] });
    expect(legacy.headers.get('sunset')).toBe(DEFAULT_SUNSET_HEADERS.sunset);
  });
});

describe('a batch', () => {
  it('carries the headers when any of its operations used a deprecated field, and the extension only on that one', async () => {
    const { status, headers, body } = await postGraphQL<GraphQLAnswer[]>(gateway.baseUrl, [
      { query: '{ pets(first: 1) { totalCount } }' },
      { query: `{ getPetById(petId: "${petId}") { id } }` },
    ]);
    expect(status).toBe(200);
    const [plain, legacy] = body;
    expect(plain).not.toHaveProperty('extensions');
    expect(legacy!.extensions).toEqual({ deprecations: [legacyEntry('2027-06-30')] });
    expect(headers.get('deprecation')).toBe(DEFAULT_SUNSET_HEADERS.deprecation);
    expect(headers.get('sunset')).toBe(DEFAULT_SUNSET_HEADERS.sunset);
  });
});
