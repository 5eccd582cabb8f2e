import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { restClient } from '../support/rest.js';

/**
 * Single-row lookups by id from concurrent requests (pet(id:), getPetById, category(id:), and REST
 * GET /pets/{petId}) are gathered within one turn of the event loop and read with one statement,
 * `WHERE id IN (…)`; every caller still gets exactly its own row (or null, or 404), and one request
 * alone still costs one statement.
 */

const gateway = useTestGateway();
const rest = restClient(gateway);
const pets: Array<{ id: string; name: string }> = [];
let categoryId: string;

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Batched' } });
  categoryId = String(category.id);
  for (let i = 0; i < 8; i++) {
    const pet = await gateway.prisma.pet.create({ data: { name: `Batched ${i}`, categoryId: category.id } });
    pets.push({ id: String(pet.id), name: pet.name });
  }
});

const petQuery = 'query Pet($id: ID!) { pet(id: $id) { id name } }';
const missing = '999999999';

/** Sends every request at once; returns the answers and the statements the gateway ran meanwhile. */
async function together<T>(requests: Array<() => Promise<T>>) {
  gateway.statements.length = 0;
  const answers = await Promise.all(requests.map((request) => request()));
  return { answers, statements: [...gateway.statements] };
}

describe('lookups by id across concurrent requests', () => {
  it('one request alone: one statement', async () => {
    const { answers, statements } = await together([() => gateway.graphql(petQuery, { id: pets[0]!.id }, { token: null })]);
    expect(answers[0]).toEqual({ data: { pet: pets[0] } });
    expect(statements).toHaveLength(1);
  });

  it('many at once: each gets its own pet (or null), with fewer statements than requests', async () => {
    const ids = [...pets.map((pet) => pet.id), missing];
    let fewest = Number.POSITIVE_INFINITY;
    // Requests sent together usually arrive in one turn of the event loop; a few rounds make it certain.
    for (let round = 0; round < 5 && fewest >= ids.length; round++) {
      const { answers, statements } = await together(ids.map((id) => () => gateway.graphql(petQuery, { id }, { token: null })));
      ids.forEach((id, i) => {
        expect(answers[i]).toEqual({ data: { pet: pets.find((pet) => pet.id === id) ?? null } });
      });
      expect(statements.every((sql) => sql.includes('"public"."pets"'))).toBe(true);
      fewest = Math.min(fewest, statements.length);
    }
    expect(fewest).toBeLessThan(ids.length);
  });

  it('mixes GraphQL and REST callers, legacy lookups and categories, and keeps each answer its own', async () => {
    let fewest = Number.POSITIVE_INFINITY;
    const requests = 2 * pets.length + 2;
    for (let round = 0; round < 5 && fewest >= requests; round++) {
      const { answers, statements } = await together<unknown>([
        ...pets.map((pet) => async () => (await rest.get(`/pets/${pet.id}`)).body),
        ...pets.map((pet) => () => gateway.graphql('query P($id: ID!) { getPetById(petId: $id) { id name } }', { id: pet.id })),
        async () => (await rest.get(`/pets/${missing}`)).status,
        () => gateway.graphql('query C($id: ID!) { category(id: $id) { id name } }', { id: categoryId }),
      ]);
      pets.forEach((pet, i) => {
        expect(answers[i]).toMatchObject({ id: Number(pet.id), name: pet.name });
        expect(answers[pets.length + i]).toMatchObject({ data: { getPetById: pet } });
      });
      expect(answers[2 * pets.length]).toBe(404);
      expect(answers[2 * pets.length + 1]).toEqual({ data: { category: { id: categoryId, name: 'Batched' } } });
      fewest = Math.min(fewest, statements.length);
    }
    expect(fewest).toBeLessThan(requests);
  });
});
