import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * Compiled execution (graphql-jit) answers exactly what graphql-js answers,
 * with the same SQL: one statement per read however deep the relations go,
 * and as many for 5 rows as for 50. A document is compiled from its second
 * execution on (the first runs on graphql-js), as the engines metric shows.
 */

// A cost limit that lets one request answer more response paths than an operation shares.
const limits = { maxCost: 200_000 };
// Field by field: query plans, which answer these documents otherwise, are off.
const standard = useTestGateway({ compiledExecution: false, limits, queryPlans: false });
const compiled = useTestGateway({ compiledExecution: { afterUses: 2 }, limits, queryPlans: false });

beforeAll(async () => {
  for (const gateway of [standard, compiled]) {
    for (let c = 0; c < 3; c++) {
      const category = await gateway.prisma.category.create({ data: { name: `Kind ${c}` } });
      for (let p = 0; p < 20; p++) {
        const pet = await gateway.prisma.pet.create({ data: { name: `Pet ${c}-${p}`, categoryId: category.id } });
        await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 5, status: 'available' } });
        if (p % 2 === 0) await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
      }
    }
  }
});

const documents: Array<[string, (n: number) => string]> = [
  [
    'pets → category → pets → inventory (three relation levels)',
    (n) => `{ pets(first: ${n}) { edges { node { name status category { name pets(first: 3) { totalCount edges { node { name inventory { quantity status } } } } } } } } }`,
  ],
  ['orders → pet → category', (n) => `{ orders(first: ${n}) { edges { node { quantity pet { name category { name } } } } } }`],
  // Pets per category kept within the cost limit: 5, then 20.
  ['categories → pets → orders', (n) => `{ categories(first: 3) { edges { node { name pets(first: ${Math.min(n, 20)}) { edges { node { name orders(first: 2) { totalCount edges { node { quantity } } } } } } } } } }`],
  ['inventory → pet → category', (n) => `{ inventory(first: ${n}) { edges { node { quantity status pet { name category { name } } } } } }`],
];

async function run(gateway: typeof standard, query: string) {
  gateway.statements.length = 0;
  const answer = await gateway.graphql(query);
  return { answer, statements: gateway.statements.length };
}

async function engines() {
  const text = await (await fetch(`${compiled.baseUrl}/metrics`)).text();
  const count = (engine: string) =>
    Number(new RegExp(`^petstore_graphql_executions_total\\{engine="${engine}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { compiled: count('compiled'), graphqlJs: count('graphql-js') };
}

describe('compiled execution', () => {
  it.each(documents)('%s: the same answer and the same one statement as graphql-js, for 5 rows and for 50', async (_name, document) => {
    for (const n of [5, 50]) {
      const query = document(n);
      const expected = await run(standard, query);
      expect(expected.answer.errors).toBeUndefined();
      const before = await engines();
      const first = await run(compiled, query);
      const second = await run(compiled, query);
      const third = await run(compiled, query);
      const after = await engines();
      // The first execution ran on graphql-js, the next two compiled.
      expect(after.graphqlJs - before.graphqlJs).toBe(1);
      expect(after.compiled - before.compiled).toBe(2);
      for (const answer of [first, second, third]) {
        expect(answer.answer).toEqual(expected.answer);
        expect(answer.statements).toBe(expected.statements);
      }
      expect(third.statements).toBe(1);
    }
  });

  it('answers the same, with the same one statement, past the 2,000 response paths an operation shares across its requests', async () => {
    // 60 pets, each with its category's 20 pets and their stock: some 2,600 paths.
    const query = '{ pets(first: 60) { nodes { category { pets(first: 20) { nodes { inventory { quantity } } } } } } }';
    const expected = await run(standard, query);
    expect(expected.answer.errors).toEqual(undefined);
    expect(expected.statements).toBe(1);
    for (let i = 0; i < 3; i++) {
      const answer = await run(compiled, query);
      expect(answer.answer).toEqual(expected.answer);
      expect(answer.statements).toBe(1);
    }
  });

  it('keeps enum values serialised (PetStatus AVAILABLE, not available)', async () => {
    const query = '{ pets(first: 1) { edges { node { status } } } }';
    await run(compiled, query);
    const { answer } = await run(compiled, query);
    expect(answer.data).toEqual({ pets: { edges: [{ node: { status: 'AVAILABLE' } }] } });
  });
});
