import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type TestGateway, useTestGateway } from '../support/gateway.js';
import { type RestClient, restClient } from '../support/rest.js';

// Both gateways are past their sunset date; one keeps answering, the other is gone.
const PAST_SUNSET = '2024-01-31';
const gone = useTestGateway({ legacySunsetDate: PAST_SUNSET, legacyAfterSunset: 'gone' });
const serving = useTestGateway({ legacySunsetDate: PAST_SUNSET, legacyAfterSunset: 'serve' });
const goneRest = restClient(gone);
const servingRest = restClient(serving);

const petIds = new Map<TestGateway, bigint>();

beforeAll(async () => {
  for (const gateway of [gone, serving]) {
    const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
    const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
    await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
    petIds.set(gateway, pet.id);
  }
});

function expectSunsetHeaders(headers: Headers) {
  expect(headers.get('sunset')).toBe('Wed, 31 Jan 2024 00:00:00 GMT');
  // Never deprecated after its own sunset (RFC 9745): the deprecation moves back to the sunset.
  expect(headers.get('deprecation')).toBe(`@${Date.UTC(2024, 0, 31) / 1000}`);
  expect(headers.get('link')).toBe('</graphql>; rel="successor-version", </openapi.json>; rel="sunset"');
}

describe('after the sunset date, with LEGACY_AFTER_SUNSET=gone', () => {
  it('answers 410 GONE naming the replacement, whatever the id', async () => {
    for (const path of [`/pets/${petIds.get(gone)}`, '/pets/424242', '/pets/abc']) {
      const response = await goneRest.get(path);
      expect(response.status).toBe(410);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.body).toEqual({
        code: 'GONE',
        message: 'GET /pets/{petId} was retired on 2024-01-31. Use the GraphQL query pet(id:) at /graphql.',
        status: 410,
        requestId: response.headers.get('x-request-id'),
      });
      expectSunsetHeaders(response.headers);
    }
  });

  it('answers HEAD with 410 too', async () => {
    const response = await goneRest.request(`/pets/${petIds.get(gone)}`, { method: 'HEAD' });
    expect(response.status).toBe(410);
    expectSunsetHeaders(response.headers);
  });

  it('leaves GET /store/orders, which is not deprecated, answering', async () => {
    const response = await goneRest.get('/store/orders');
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(1);
  });

  it('says so in the OpenAPI document', async () => {
    const document = await goneRest.document();
    const { description } = document.paths['/pets/{petId}'].get;
    expect(description).toContain('Sunset date: 2024-01-31');
    expect(description).toContain('answers 410');
  });
});

describe('getPetById after the sunset date follows the same setting', () => {
  const lookup = 'query Legacy($petId: ID!) { getPetById(petId: $petId) { id name } pet(id: $petId) { id } }';

  it('answers GONE with gone, while pet(id:) keeps answering', async () => {
    const petId = await firstPetId(gone);
    const response = await gone.graphql<{ getPetById: unknown; pet: { id: string } }>(lookup, { petId });
    expect(response.errors).toHaveLength(1);
    expect(response.errors?.[0]).toMatchObject({
      path: ['getPetById'],
      extensions: { code: 'GONE', status: 410 },
    });
    expect(response.errors?.[0]?.message).toContain('pet(id:)');
    expect(response.data).toEqual({ getPetById: null, pet: { id: petId } });
  });

  it('keeps answering with serve', async () => {
    const petId = await firstPetId(serving);
    const response = await serving.graphql(lookup, { petId });
    expect(response.errors).toBeUndefined();
    expect(response.data).toMatchObject({ getPetById: { id: petId }, pet: { id: petId } });
  });
});

describe('after the sunset date, with LEGACY_AFTER_SUNSET=serve', () => {
  it('keeps answering, with the same headers', async () => {
    const id = petIds.get(serving)!;
    const response = await servingRest.get(`/pets/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: Number(id), name: 'Rex' });
    expectSunsetHeaders(response.headers);
    const document = await servingRest.document();
    expect(document.paths['/pets/{petId}'].get.description).toContain('LEGACY_AFTER_SUNSET=serve');
  });
});

describe('one sunset date for GraphQL and REST', () => {
  it('names the date of the Sunset header in the getPetById deprecation', async () => {
    const pairs: Array<[TestGateway, RestClient]> = [
      [gone, goneRest],
      [serving, servingRest],
    ];
    for (const [gateway, rest] of pairs) {
      const sunset = (await rest.get(`/pets/${petIds.get(gateway)}`)).headers.get('sunset')!;
      const introspection = await gateway.graphql<{
        __type: { fields: Array<{ name: string; deprecationReason: string | null }> };
      }>('{ __type(name: "Query") { fields(includeDeprecated: true) { name deprecationReason } } }');
      const field = introspection.data!.__type.fields.find((candidate) => candidate.name === 'getPetById');
      expect(field?.deprecationReason).toContain(new Date(sunset).toISOString().slice(0, 10));
    }
  });
});

describe('the LEGACY_AFTER_SUNSET setting', () => {
  it('is gone unless set, and accepts serve or gone', () => {
    expect(loadConfig({}).legacy.afterSunset).toBe('gone');
    expect(loadConfig({ LEGACY_AFTER_SUNSET: 'serve' }).legacy.afterSunset).toBe('serve');
    expect(loadConfig({ LEGACY_AFTER_SUNSET: 'gone' }).legacy.afterSunset).toBe('gone');
    expect(loadConfig({ LEGACY_AFTER_SUNSET: '' }).legacy.afterSunset).toBe('gone');
  });

  it('refuses anything else with a message naming what it accepts', () => {
    expect(() => loadConfig({ LEGACY_AFTER_SUNSET: 'later' })).toThrow(ConfigError);
    expect(() => loadConfig({ LEGACY_AFTER_SUNSET: 'later' })).toThrow(
      'LEGACY_AFTER_SUNSET must be serve (keep answering GET /pets/{petId}) or gone (answer 410)',
    );
  });
});

async function firstPetId(gateway: TestGateway): Promise<string> {
  const pet = await gateway.prisma.pet.findFirstOrThrow({ orderBy: { id: 'asc' } });
  return pet.id.toString();
}
