import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * Lists are Relay connections named by their node type, one type shared by every list of it
 * (PetConnection / PetEdge for Query.pets and Category.pets), with `nodes` beside `edges`. Reading
 * `nodes` costs the same single statement as `edges`; asking only for `totalCount` reads no rows.
 */

const gateway = useTestGateway();

beforeAll(async () => {
  for (let c = 0; c < 2; c++) {
    const category = await gateway.prisma.category.create({ data: { name: `Kind ${c}` } });
    for (let p = 0; p < 3; p++) {
      const pet = await gateway.prisma.pet.create({ data: { name: `Pet ${c}-${p}`, categoryId: category.id } });
      await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: p + 1, status: 'available' } });
      await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
    }
  }
});

async function run(query: string) {
  gateway.statements.length = 0;
  const answer = await gateway.graphql(query);
  return { answer, statements: [...gateway.statements] };
}

describe('connection types', () => {
  it('one type per node type, shared by every list of it', async () => {
    const { answer } = await run(`{
      query: __type(name: "Query") { fields { name type { ofType { name } } } }
      category: __type(name: "Category") { fields { name type { ofType { name } } } }
      pet: __type(name: "Pet") { fields { name type { ofType { name } } } }
      connection: __type(name: "PetConnection") { fields { name } }
      edge: __type(name: "PetEdge") { fields { name type { ofType { name } } } }
      old: __type(name: "QueryPetsConnection") { name }
    }`);
    const data = answer.data as Record<string, { fields: Array<{ name: string; type: { ofType: { name: string } | null } }> } | null>;
    const returns = (type: string, field: string) => data[type]!.fields.find((f) => f.name === field)!.type.ofType?.name;
    expect(returns('query', 'pets')).toBe('PetConnection');
    expect(returns('category', 'pets')).toBe('PetConnection');
    expect(returns('query', 'orders')).toBe('OrderConnection');
    expect(returns('pet', 'orders')).toBe('OrderConnection');
    expect(returns('query', 'categories')).toBe('CategoryConnection');
    expect(returns('query', 'inventory')).toBe('InventoryItemConnection');
    expect(data.connection!.fields.map((f) => f.name).sort()).toEqual(['edges', 'nodes', 'pageInfo', 'totalCount', 'totalCountPrecision']);
    expect(returns('edge', 'node')).toBe('Pet');
    expect(data.old).toBeNull();
  });

  it('nodes are the nodes of edges, in one statement, nested too', async () => {
    const withEdges = await run('{ pets(first: 4) { edges { node { name category { name } inventory { quantity } } } } }');
    const withNodes = await run('{ pets(first: 4) { nodes { name category { name } inventory { quantity } } } }');
    const edges = (withEdges.answer.data as { pets: { edges: Array<{ node: unknown }> } }).pets.edges;
    expect(withNodes.answer).toEqual({ data: { pets: { nodes: edges.map((edge) => edge.node) } } });
    expect(withNodes.statements).toHaveLength(1);

    const nested = await run('{ categories(first: 2) { nodes { name pets(first: 2) { totalCount nodes { name orders { nodes { quantity } } } } } } }');
    expect(nested.answer).toEqual({
      data: {
        categories: {
          nodes: [0, 1].map((c) => ({
            name: `Kind ${c}`,
            pets: { totalCount: 3, nodes: [0, 1].map((p) => ({ name: `Pet ${c}-${p}`, orders: { nodes: [{ quantity: 1 }] } })) },
          })),
        },
      },
    });
    expect(nested.statements).toHaveLength(1);
  });

  it('totalCount alone reads no rows: one count, of the kept counts for a list without a filter', async () => {
    const { answer, statements } = await run('{ pets { totalCount } inventory { totalCount } }');
    expect(answer).toEqual({ data: { pets: { totalCount: 6 }, inventory: { totalCount: 6 } } });
    expect(statements).toHaveLength(2);
    for (const sql of statements) expect(sql).toMatch(/FROM row_counts/);
    const filtered = await run('{ pets(filter: { status: AVAILABLE }) { totalCount } }');
    expect(filtered.statements).toHaveLength(1);
    expect(filtered.statements[0]).toMatch(/COUNT\(/i);
    expect(filtered.statements[0]).not.toMatch(/row_counts/);
  });
});
