import { beforeAll, describe, expect, it } from 'vitest';
import { scopes } from '../../src/auth/scopes.js';
import { useTestGateway } from '../support/gateway.js';
import { postGraphQL } from '../support/http.js';
import { testToken } from '../support/tokens.js';

/**
 * Global object identification (the GraphQL spec of that name, as Relay uses it): every Pet,
 * Category, Order and InventoryItem has a global id, `nodeId`, and `node(id:)`/`nodes(ids:)` find
 * each again, batched by type, with the scope an order needs; a global id that is not one of ours is
 * refused in the documented shape. The spec's ids keep their meaning.
 */

const gateway = useTestGateway();

interface Ids {
  category: { id: string; nodeId: string };
  pets: Array<{ id: string; nodeId: string }>;
  order: { id: string; nodeId: string };
  inventory: { petId: string; nodeId: string };
}
let ids: Ids;

const encode = (text: string) => Buffer.from(text).toString('base64');

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Nodes' } });
  const pets = [];
  for (const name of ['Ada', 'Bo', 'Cy']) pets.push(await gateway.prisma.pet.create({ data: { name, categoryId: category.id } }));
  await gateway.prisma.inventoryItem.create({ data: { petId: pets[0]!.id, quantity: 4, status: 'available' } });
  await gateway.prisma.order.create({ data: { petId: pets[1]!.id, quantity: 2 } });
  const read = await gateway.graphql<{
    category: Ids['category'] & { pets: { nodes: Ids['pets'] } };
    orders: { nodes: Array<Ids['order']> };
    inventoryItem: Ids['inventory'];
  }>(
    `{ category(id: "${category.id}") { id nodeId pets(first: 10) { nodes { id nodeId } } }
       orders(first: 1, filter: { petId: "${pets[1]!.id}" }) { nodes { id nodeId } }
       inventoryItem(petId: "${pets[0]!.id}") { petId nodeId } }`,
  );
  expect(read.errors).toBeUndefined();
  ids = {
    category: { id: read.data!.category.id, nodeId: read.data!.category.nodeId },
    pets: read.data!.category.pets.nodes,
    order: read.data!.orders.nodes[0]!,
    inventory: read.data!.inventoryItem,
  };
});

const everyType = /* GraphQL */ `
  __typename nodeId
  ... on Pet { id name }
  ... on Category { id name }
  ... on Order { id quantity }
  ... on InventoryItem { petId stock: quantity }
`;

describe('global ids', () => {
  it('are opaque, distinct across types, and leave the spec ids as they are', () => {
    expect(ids.category.nodeId).toBe(encode(`Category:${ids.category.id}`));
    expect(ids.pets[0]!.nodeId).toBe(encode(`Pet:${ids.pets[0]!.id}`));
    expect(ids.order.nodeId).toBe(encode(`Order:${ids.order.id}`));
    expect(ids.inventory.nodeId).toBe(encode(`InventoryItem:${ids.inventory.petId}`));
    // Pet 1 and its stock entry share their spec id, never their global id.
    expect(ids.inventory.nodeId).not.toBe(ids.pets[0]!.nodeId);
    expect(ids.pets[0]!.id).toMatch(/^\d+$/);
  });

  it('find each object again with node(id:), whatever its type, by its plan from the first request', async () => {
    const executed = await gateway.executions('plan');
    const expected = [
      { __typename: 'Category', nodeId: ids.category.nodeId, id: ids.category.id, name: 'Nodes' },
      { __typename: 'Pet', nodeId: ids.pets[2]!.nodeId, id: ids.pets[2]!.id, name: 'Cy' },
      { __typename: 'Order', nodeId: ids.order.nodeId, id: ids.order.id, quantity: 2 },
      { __typename: 'InventoryItem', nodeId: ids.inventory.nodeId, petId: ids.inventory.petId, stock: 4 },
    ];
    for (const node of expected) {
      const answer = await gateway.graphql(`query Node($id: ID!) { node(id: $id) { ${everyType} } }`, { id: node.nodeId });
      expect(answer).toEqual({ data: { node } });
    }
    expect(await gateway.executions('plan')).toBe(executed + expected.length);
  });

  it('find many with nodes(ids:), in their order, null where there is no row, one statement per type', async () => {
    const missing = encode('Pet:99999999');
    const wanted = [ids.pets[1]!.nodeId, ids.category.nodeId, missing, ids.pets[0]!.nodeId, ids.order.nodeId, ids.pets[2]!.nodeId];
    gateway.statements.length = 0;
    const answer = await gateway.graphql<{ nodes: Array<{ __typename: string; nodeId: string } | null> }>(
      `query Nodes($ids: [ID!]!) { nodes(ids: $ids) { ${everyType} } }`,
      { ids: wanted },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.nodes.map((node) => node?.nodeId ?? null)).toEqual(wanted.map((id) => (id === missing ? null : id)));
    // Pets, the category, the order: three statements for six ids.
    expect(gateway.statements.filter((statement) => /^(\/\* petstore read \*\/ )?SELECT/.test(statement))).toHaveLength(3);
  });

  it('page a connection of a node after a cursor, as Relay asks a paginated fragment\'s next page, by its plan', async () => {
    const first = await gateway.graphql<{ node: { pets: { edges: Array<{ node: { name: string } }>; pageInfo: { endCursor: string } } } }>(
      'query First($id: ID!) { node(id: $id) { ... on Category { pets(first: 2) { edges { node { name } } pageInfo { endCursor } } } } }',
      { id: ids.category.nodeId },
    );
    expect(first.data!.node.pets.edges.map(({ node }) => node.name)).toEqual(['Ada', 'Bo']);
    const executed = await gateway.executions('plan');
    const next = await gateway.graphql(
      'query Next($id: ID!, $after: String) { node(id: $id) { ... on Category { pets(first: 2, after: $after) { edges { node { name } } pageInfo { hasNextPage } } } } }',
      { id: ids.category.nodeId, after: first.data!.node.pets.pageInfo.endCursor },
    );
    expect(next).toEqual({ data: { node: { pets: { edges: [{ node: { name: 'Cy' } }], pageInfo: { hasNextPage: false } } } } });
    expect(await gateway.executions('plan')).toBe(executed + 1);
  });

  it('give an order only to a caller with orders:read, in node and at its own index in nodes', async () => {
    const node = `query Node($id: ID!) { node(id: $id) { nodeId } }`;
    const anonymous = await postGraphQL<{ data: unknown; errors: Array<{ extensions: { code: string } }> }>(gateway.baseUrl, { query: node, variables: { id: ids.order.nodeId } });
    expect(anonymous.body.data).toEqual({ node: null });
    expect(anonymous.body.errors.map((error) => error.extensions.code)).toEqual(['UNAUTHENTICATED']);
    const writer = await gateway.graphql(node, { id: ids.order.nodeId }, { token: await testToken([scopes.writeOrders]) });
    expect(writer.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
    const reader = await gateway.graphql(node, { id: ids.order.nodeId }, { token: await testToken([scopes.readOrders]) });
    expect(reader).toEqual({ data: { node: { nodeId: ids.order.nodeId } } });

    const mixed = await gateway.graphql<{ nodes: unknown[] }>(`query Nodes($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }`, { ids: [ids.pets[0]!.nodeId, ids.order.nodeId] }, { token: null });
    expect(mixed.data).toEqual({ nodes: [{ nodeId: ids.pets[0]!.nodeId }, null] });
    expect(mixed.errors?.map((error) => [error.extensions?.code, error.path])).toEqual([['UNAUTHENTICATED', ['nodes', 1]]]);
  });

  it.each([
    ['not base64 of Type:id', 'nope'],
    ['a type that is no Node here', encode('User:1')],
    ['an id that is no int64', encode('Pet:one')],
    ['an id of zero', encode('Pet:0')],
    ['an id out of range', encode('Pet:99999999999999999999')],
    // Each decodes to pet 1, whose answer would carry another nodeId than the one asked for.
    ['an id written with a leading zero', encode('Pet:01')],
    ['base64 with a space in it', `${encode('Pet:1').slice(0, 4)} ${encode('Pet:1').slice(4)}`],
    ['base64 without its padding', encode('Pet:1').replace(/=+$/, '')],
  ])('refuse %s with VALIDATION_FAILED, never a 500', async (_what, id) => {
    const answer = await gateway.graphql('query Node($id: ID!) { node(id: $id) { nodeId } }', { id });
    expect(answer.errors?.map((error) => [error.extensions?.code, error.extensions?.field])).toEqual([['VALIDATION_FAILED', 'id']]);
    expect(answer.errors?.[0]?.message).toMatch(/global id/);
    const many = await gateway.graphql('query Nodes($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }', { ids: [ids.pets[0]!.nodeId, id] });
    expect(many.errors?.map((error) => error.extensions?.code)).toEqual(['VALIDATION_FAILED']);
  });

  it(`refuse more than 100 ids at once`, async () => {
    const answer = await gateway.graphql('query Nodes($ids: [ID!]!) { nodes(ids: $ids) { nodeId } }', { ids: Array.from({ length: 101 }, () => ids.pets[0]!.nodeId) });
    expect(answer.errors?.map((error) => [error.extensions?.code, error.extensions?.field])).toEqual([['VALIDATION_FAILED', 'ids']]);
  });

  it('leave REST as it was: the spec ids, no global id', async () => {
    const response = await fetch(`${gateway.baseUrl}/pets/${ids.pets[0]!.id}`);
    const pet = (await response.json()) as Record<string, unknown>;
    expect(pet).toMatchObject({ id: Number(ids.pets[0]!.id), name: 'Ada' });
    expect(pet).not.toHaveProperty('nodeId');
  });
});
