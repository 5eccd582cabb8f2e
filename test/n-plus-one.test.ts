import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './support/gateway.js';

const gateway = useTestGateway();

const nestedPets = /* GraphQL */ `
  query NestedPets($first: Int!) {
    pets(first: $first) {
      edges {
        node {
          category { name }
          inventory { quantity }
          orders(first: 5) { edges { node { id } } }
        }
      }
    }
  }
`;

beforeAll(async () => {
  const categories = await Promise.all(
    ['Dogs', 'Cats', 'Birds'].map((name) => gateway.prisma.category.create({ data: { name } })),
  );
  for (let i = 0; i < 60; i++) {
    await gateway.prisma.pet.create({
      data: {
        name: `Pet ${i}`,
        categoryId: categories[i % 3]!.id,
        inventory: { create: { quantity: 5, status: 'available' } },
        orders: { create: [{ quantity: 1 }, { quantity: 2, complete: true }] },
      },
    });
  }
});

async function statementsFor(first: number) {
  gateway.statements.length = 0;
  const response = await gateway.graphql<{ pets: { edges: unknown[] } }>(nestedPets, { first });
  expect(response.errors).toBeUndefined();
  expect(response.data?.pets.edges).toHaveLength(first);
  return [...gateway.statements];
}

describe('no N+1 queries', () => {
  it('runs the same number of SQL statements for 5 pets as for 50, one per level of nesting', async () => {
    const five = await statementsFor(5);
    const fifty = await statementsFor(50);
    console.log(fifty);
    expect(fifty.length).toBe(five.length);
    // pets, then categories, inventory and orders: one statement each.
    expect(fifty.length).toBeLessThanOrEqual(4);
  });
});
