import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './support/gateway.js';

const gateway = useTestGateway();

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
  const found = text.split('\n').find((row) => line.test(row));
  return found ? Number(found.slice(found.lastIndexOf(' ') + 1)) : 0;
}

const legacyUse = /^petstore_deprecated_use_total\{target="Query\.getPetById",client="test-user"\}/;

describe('metrics of GraphQL operations', () => {
  let petId: string;
  beforeAll(async () => {
    const category = await gateway.prisma.category.create({ data: { name: 'Observed' } });
    petId = (await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } })).id.toString();
  });

  it('counts every use of a deprecated field, each time the same document is sent again', async () => {
    const document = 'query Legacy($id: ID!) { getPetById(petId: $id) { id } }';
    const before = await metric(legacyUse);
    for (let i = 0; i < 3; i++) expect((await gateway.graphql(document, { id: petId })).errors).toBeUndefined();
    expect(await metric(legacyUse)).toBe(before + 3);

    const twice = 'query LegacyTwice($id: ID!) { a: getPetById(petId: $id) { id } b: getPetById(petId: $id) { id } }';
    expect((await gateway.graphql(twice, { id: petId })).errors).toBeUndefined();
    expect(await metric(legacyUse)).toBe(before + 5);
  });

  it('names each request by the operation it ran, also in a document with several', async () => {
    const document = 'query First { pets(first: 1) { edges { node { id } } } } query Second { categories { edges { node { id } } } }';
    const first = /^petstore_requests_total\{operation="First",status="200"\}/;
    const second = /^petstore_requests_total\{operation="Second",status="200"\}/;
    const [firstBefore, secondBefore] = [await metric(first), await metric(second)];
    for (const operationName of ['First', 'Second', 'Second']) {
      const response = await fetch(`${gateway.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: document, operationName }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(await metric(first)).toBe(firstBefore + 1);
    expect(await metric(second)).toBe(secondBefore + 2);
  });
});
