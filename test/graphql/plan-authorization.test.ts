import { beforeAll, describe, expect, it, vi } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { postGraphQL } from '../support/http.js';
import { testToken } from '../support/tokens.js';

/**
 * An authorization rule added to a type, as a developer adds one (a line in the type's definition),
 * holds on every request, whichever engine executes it: the query plans find every rule the schema
 * states and either check it as scope-auth does, or, for a rule they cannot decide before reading
 * (a function of the row), leave the document to graphql-js. Nothing in the plans' code names these
 * rules; this file adds them to the schema it builds, and nowhere else.
 */

const added = vi.hoisted(() => ({
  // A scope map on a type: every field of a category needs catalog:write.
  Category: { scope: 'catalog:write' },
  // A function of the row: decided per stock entry, so no plan can decide it before reading.
  InventoryItem: (item: { quantity: number }) => ({ scope: item.quantity > 5 ? 'inventory:write' : 'orders:read' }),
}));

vi.mock(import('../../src/builder.js'), async (importOriginal) => {
  const original = await importOriginal();
  const { builder } = original;
  const prismaObject = builder.prismaObject.bind(builder);
  builder.prismaObject = ((name: string, options: object) =>
    prismaObject(name as never, (name in added ? { ...options, authScopes: added[name as keyof typeof added] } : options) as never)) as never;
  return original;
});

const gateway = useTestGateway();

let petId = '';
let categoryId = '';
beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Guarded' } });
  categoryId = String(category.id);
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id, inventory: { create: { quantity: 9, status: 'available' } } } });
  petId = String(pet.id);
});

type Answer = { data?: Record<string, unknown> | null; errors?: Array<{ path?: Array<string | number>; extensions?: { code?: string } }> };

const send = async (query: string, scopeList?: string[]) => {
  const headers: Record<string, string> = scopeList === undefined ? {} : { authorization: `Bearer ${await testToken(scopeList)}` };
  return (await postGraphQL<Answer>(gateway.baseUrl, { query }, headers)).body;
};

/** Every document that reaches a category, in the shapes clients write. */
const reachingCategories = [
  '{ categories(first: 5) { nodes { id name } } }',
  '{ categories(first: 5) { edges { node { name } } } }',
  `{ category(id: "CATEGORY") { name description } }`,
  '{ pets(first: 5) { nodes { name category { name } } } }',
  `{ pet(id: "PET") { id category { id } } }`,
  '{ inventory(first: 5) { nodes { petId pet { category { name } } } } }',
];
const withIds = (query: string) => query.replace('CATEGORY', categoryId).replace('PET', petId);

describe('a rule added to a type', () => {
  it('refuses a caller without its scope on every request, the first and every one after', async () => {
    const executed = await gateway.executions('plan');
    for (const query of reachingCategories.map(withIds)) {
      for (let round = 0; round < 6; round++) {
        for (const caller of [undefined, [scopes.readOrders]]) {
          const answer = await send(query, caller);
          const codes = answer.errors?.map((error) => error.extensions?.code);
          expect(codes, `${query} (round ${round})`).toContain(caller ? 'FORBIDDEN' : 'UNAUTHENTICATED');
          // No category's field is in the answer.
          expect(JSON.stringify(answer.data ?? null)).not.toContain('Guarded');
        }
      }
    }
    // None of these was answered by a plan: each was left to graphql-js.
    expect(await gateway.executions('plan')).toBe(executed);
  });

  it('lets a caller with its scope through, and the plans answer them', async () => {
    const executed = await gateway.executions('plan');
    for (const query of reachingCategories.slice(0, 5).map(withIds)) {
      for (let round = 0; round < 3; round++) {
        const answer = await send(query, [scopes.writeCatalog]);
        expect(answer.errors, query).toBeUndefined();
        expect(JSON.stringify(answer.data)).toMatch(/Guarded|"id"/);
      }
    }
    expect(await gateway.executions('plan')).toBe(executed + 15);
  });

  it('that depends on the row leaves every document that reaches the type to graphql-js, which applies it', async () => {
    const executed = { plan: await gateway.executions('plan'), graphqlJs: await gateway.executions('graphql-js') };
    const query = withIds('{ pet(id: "PET") { name inventory { quantity } } }');
    for (let round = 0; round < 3; round++) {
      // Nine in stock: inventory:write is needed.
      const refused = await send(query, [scopes.readOrders]);
      expect(refused.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
      expect(refused.data).toEqual({ pet: { name: 'Rex', inventory: null } });
      const allowed = await send(query, [scopes.writeInventory]);
      expect(allowed.errors).toBeUndefined();
      expect(allowed.data).toEqual({ pet: { name: 'Rex', inventory: { quantity: 9 } } });
    }
    expect(await gateway.executions('plan')).toBe(executed.plan);
    expect(await gateway.executions('graphql-js')).toBe(executed.graphqlJs + 6);
    // A document that does not reach it keeps its plan.
    await send(withIds('{ pet(id: "PET") { name } }'));
    expect(await gateway.executions('plan')).toBe(executed.plan + 1);
  });
});
