import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * Nested reads in as few SQL statements as their nesting allows, whatever the
 * page size: no N+1 queries. (The statements of placing an order:
 * orders/place-order.test.ts.)
 */
const gateway = useTestGateway();
/** The same data, with plans reading through Prisma's statements (GRAPHQL_PLAN_STATEMENTS=false). */
const throughPrisma = useTestGateway({ sameDatabaseAs: gateway, planStatements: false });

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
    expect(fifty.length).toBe(five.length);
    // pets, then categories, inventory and orders: at most one statement each…
    expect(fifty.length).toBeLessThanOrEqual(4);
    // …and with Prisma's relation joins all of them in one statement.
    expect(fifty).toHaveLength(1);
  });

  it('pages nested lists in the database: one statement, with the limit inside it', async () => {
    const nestedCategories = /* GraphQL */ `
      query NestedCategories($first: Int!, $pets: Int!) {
        categories(first: $first) { edges { node { name pets(first: $pets) { edges { node { id name } } } } } }
      }
    `;
    const run = async (instance: typeof gateway, first: number, pets: number) => {
      instance.statements.length = 0;
      const response = await instance.graphql<{
        categories: { edges: Array<{ node: { pets: { edges: unknown[] } } }> };
      }>(nestedCategories, { first, pets });
      expect(response.errors).toBeUndefined();
      expect(response.data?.categories.edges).toHaveLength(first);
      for (const edge of response.data!.categories.edges) expect(edge.node.pets.edges).toHaveLength(pets);
      return [...instance.statements];
    };
    // Through Prisma's statement (GRAPHQL_PLAN_STATEMENTS=false) and the gateway's own (src/database/find-many.ts):
    // one statement either way.
    const small = await run(throughPrisma, 1, 2);
    const large = await run(gateway, 3, 15);
    expect(small).toHaveLength(1);
    expect(large).toHaveLength(1);
    // Each category's pets are cut by a LIMIT in the nested select, not loaded whole and cut in memory.
    expect(small[0]).toMatch(/LATERAL[\s\S]*LIMIT[\s\S]*LIMIT/);
    expect(large[0]).toMatch(/^\/\* petstore read \*\/ SELECT[\s\S]*ARRAY\(SELECT[\s\S]*LIMIT[\s\S]*LIMIT/);
  });

  it('reads a planned list through Prisma\'s statement when GRAPHQL_PLAN_STATEMENTS is false, with the same answer', async () => {
    const read = async (instance: typeof gateway) => {
      instance.statements.length = 0;
      const response = await instance.graphql(nestedPets, { first: 7 });
      expect(response.errors).toBeUndefined();
      return { data: response.data, statements: [...instance.statements] };
    };
    const prisma = await read(throughPrisma);
    const own = await read(gateway);
    expect(prisma.statements).toHaveLength(1);
    expect(prisma.statements[0]).toMatch(/^SELECT[\s\S]*JSONB_BUILD_OBJECT[\s\S]*LATERAL/);
    expect(own.statements).toHaveLength(1);
    expect(own.statements[0]).toMatch(/^\/\* petstore read \*\/ SELECT[\s\S]*LEFT JOIN/);
    expect(own.data).toEqual(prisma.data);
    expect((own.data as { pets: { edges: unknown[] } }).pets.edges).toHaveLength(7);
  });
});
