import { beforeAll, describe, expect, it } from 'vitest';
import { allScopes, type Scope, scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { testToken } from '../support/tokens.js';
import { bearer, databaseState, expectGraphQLError, type GraphQLAnswer, postGraphQL } from '../support/http.js';
import { restClient } from '../support/rest.js';

/**
 * Every protected operation, through HTTP: anonymous is 401 UNAUTHENTICATED,
 * a token without the scope is 403 FORBIDDEN, and neither writes anything nor
 * runs a statement; a token with only that scope succeeds.
 */

const gateway = useTestGateway();
const rest = restClient(gateway);

const ids: Record<string, string> = {};

beforeAll(async () => {
  const { prisma } = gateway;
  const dogs = await prisma.category.create({ data: { name: 'Dogs' } });
  const empty = await prisma.category.create({ data: { name: 'Empty' } });
  const rex = await prisma.pet.create({ data: { name: 'Rex', categoryId: dogs.id } });
  const gone = await prisma.pet.create({ data: { name: 'Gone', categoryId: dogs.id } });
  await prisma.inventoryItem.create({ data: { petId: rex.id, quantity: 10, status: 'available' } });
  const toComplete = await prisma.order.create({ data: { petId: rex.id, quantity: 1 } });
  const toCancel = await prisma.order.create({ data: { petId: rex.id, quantity: 2 } });
  Object.assign(ids, {
    dogs: String(dogs.id),
    empty: String(empty.id),
    rex: String(rex.id),
    gone: String(gone.id),
    toComplete: String(toComplete.id),
    toCancel: String(toCancel.id),
  });
});

interface Protected {
  name: string;
  scope: Scope;
  query: string;
  variables: () => Record<string, unknown>;
  /** A mutation, or a top-level query: refused before any statement runs. */
  refusedWithoutStatements: boolean;
  /** What the allowed request answers. */
  succeeded: (data: Record<string, unknown>) => void;
}

const operations: Protected[] = [
  {
    name: 'orders',
    scope: scopes.readOrders,
    query: '{ orders { totalCount edges { node { id quantity } } } }',
    variables: () => ({}),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toMatchObject({ orders: { totalCount: 2 } }),
  },
  {
    name: 'order',
    scope: scopes.readOrders,
    query: 'query ($id: ID!) { order(id: $id) { id quantity } }',
    variables: () => ({ id: ids.toComplete }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ order: { id: ids.toComplete, quantity: 1 } }),
  },
  {
    name: 'Pet.orders',
    scope: scopes.readOrders,
    query: 'query ($id: ID!) { pet(id: $id) { name orders { totalCount edges { node { quantity } } } } }',
    variables: () => ({ id: ids.rex }),
    // The pet is read (public); only its orders are refused.
    refusedWithoutStatements: false,
    succeeded: (data) => expect(data).toMatchObject({ pet: { name: 'Rex', orders: { totalCount: 2 } } }),
  },
  {
    name: 'createCategory',
    scope: scopes.writeCatalog,
    query: 'mutation { createCategory(input: { name: "Cats" }) { name } }',
    variables: () => ({}),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ createCategory: { name: 'Cats' } }),
  },
  {
    name: 'updateCategory',
    scope: scopes.writeCatalog,
    query: 'mutation ($id: ID!) { updateCategory(id: $id, input: { description: "Good dogs" }) { description } }',
    variables: () => ({ id: ids.dogs }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ updateCategory: { description: 'Good dogs' } }),
  },
  {
    name: 'deleteCategory',
    scope: scopes.writeCatalog,
    query: 'mutation ($id: ID!) { deleteCategory(id: $id) { name } }',
    variables: () => ({ id: ids.empty }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ deleteCategory: { name: 'Empty' } }),
  },
  {
    name: 'createPet',
    scope: scopes.writeCatalog,
    query: 'mutation ($category: ID!) { createPet(input: { name: "Tom", categoryId: $category }) { name } }',
    variables: () => ({ category: ids.dogs }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ createPet: { name: 'Tom' } }),
  },
  {
    name: 'updatePet',
    scope: scopes.writeCatalog,
    query: 'mutation ($id: ID!) { updatePet(id: $id, input: { name: "Rex II" }) { name } }',
    variables: () => ({ id: ids.rex }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ updatePet: { name: 'Rex II' } }),
  },
  {
    name: 'deletePet',
    scope: scopes.writeCatalog,
    query: 'mutation ($id: ID!) { deletePet(id: $id) { name } }',
    variables: () => ({ id: ids.gone }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ deletePet: { name: 'Gone' } }),
  },
  {
    name: 'placeOrder',
    scope: scopes.writeOrders,
    query: 'mutation ($pet: ID!) { placeOrder(input: { petId: $pet, quantity: 3 }) { quantity complete } }',
    variables: () => ({ pet: ids.rex }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ placeOrder: { quantity: 3, complete: false } }),
  },
  {
    name: 'completeOrder',
    scope: scopes.writeOrders,
    query: 'mutation ($id: ID!) { completeOrder(id: $id) { complete } }',
    variables: () => ({ id: ids.toComplete }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ completeOrder: { complete: true } }),
  },
  {
    name: 'cancelOrder',
    scope: scopes.writeOrders,
    query: 'mutation ($id: ID!) { cancelOrder(id: $id) { quantity } }',
    variables: () => ({ id: ids.toCancel }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ cancelOrder: { quantity: 2 } }),
  },
  {
    name: 'updateInventory',
    scope: scopes.writeInventory,
    query: 'mutation ($pet: ID!) { updateInventory(petId: $pet, input: { quantity: 42 }) { quantity } }',
    variables: () => ({ pet: ids.rex }),
    refusedWithoutStatements: true,
    succeeded: (data) => expect(data).toEqual({ updateInventory: { quantity: 42 } }),
  },
];

async function ask(operation: Protected, token: string | null) {
  const body = { query: operation.query, variables: operation.variables() };
  return postGraphQL<GraphQLAnswer>(gateway.baseUrl, body, token ? bearer(token) : {});
}

describe('every protected GraphQL operation', () => {
  it('covers every scope', () => {
    expect(new Set(operations.map((operation) => operation.scope))).toEqual(new Set(allScopes));
  });

  // In order: each allowed write changes what the next ones see.
  for (const operation of operations) {
    it(`${operation.name}: 401 anonymous, 403 without ${operation.scope}, nothing written; done with it`, async () => {
      const before = await databaseState(gateway.prisma);
      gateway.statements.length = 0;

      const anonymous = await ask(operation, null);
      expect(anonymous.status).toBe(200);
      const unauthenticated = expectGraphQLError(anonymous, 'UNAUTHENTICATED', 401);
      expect(unauthenticated.message).toBe(`This needs a bearer token with the scope ${operation.scope}.`);

      const otherScopes = allScopes.filter((scope) => scope !== operation.scope);
      for (const token of [await testToken(otherScopes, 'busy-bee'), await testToken([], 'nobody')]) {
        const forbidden = expectGraphQLError(await ask(operation, token), 'FORBIDDEN', 403);
        expect(forbidden.message).toBe(`Your token lacks the scope ${operation.scope}.`);
      }
      // The error names the refused field, and nothing of it is in the answer.
      expect(anonymous.body.errors![0]!.path!.at(-1)).toBe(operation.name.split('.').at(-1));
      expect(JSON.stringify(anonymous.body.data ?? null)).not.toMatch(/totalCount|quantity|Cats|Tom/);

      if (operation.refusedWithoutStatements) expect(gateway.statements).toEqual([]);
      expect(await databaseState(gateway.prisma)).toBe(before);

      const allowed = await ask(operation, await testToken([operation.scope], 'just-enough'));
      expect(allowed.body.errors, allowed.text).toBeUndefined();
      operation.succeeded(allowed.body.data!);
    });
  }
});

describe('REST GET /store/orders', () => {
  it('is 401 anonymous, 403 without orders:read, 200 with it', async () => {
    const anonymous = await rest.get('/store/orders', { authorization: '' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');

    const lacking = await rest.get('/store/orders', {
      authorization: `Bearer ${await testToken([scopes.writeOrders, scopes.writeCatalog, scopes.writeInventory])}`,
    });
    expect(lacking.status).toBe(403);
    expect(lacking.body).toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
      message: 'Your token lacks the scope orders:read.',
      requestId: lacking.headers.get('x-request-id'),
    });

    const allowed = await rest.get('/store/orders', { authorization: `Bearer ${await testToken(['orders:read'])}` });
    expect(allowed.status).toBe(200);
    expect(Array.isArray(allowed.body)).toBe(true);
  });

  it('HEAD obeys the same rule', async () => {
    const anonymous = await rest.request('/store/orders', { method: 'HEAD', headers: { authorization: '' } });
    expect(anonymous.status).toBe(401);
    const allowed = await rest.request('/store/orders', {
      method: 'HEAD',
      headers: { authorization: `Bearer ${await testToken(['orders:read'])}` },
    });
    expect(allowed.status).toBe(200);
  });

  it('is described with the bearer scheme and its scope in the OpenAPI document', async () => {
    const document = await rest.document();
    expect(document.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
    });
    const { get } = document.paths['/store/orders'];
    expect(get.security).toEqual([{ bearerAuth: [] }]);
    expect(get['x-required-scopes']).toEqual(['orders:read']);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['401', '403']));
    // Public, but a token that is sent must be valid.
    expect(document.paths['/pets/{petId}'].get.security).toEqual([{}, { bearerAuth: [] }]);
  });
});
