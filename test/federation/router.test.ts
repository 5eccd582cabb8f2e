import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSubgraph } from '../../src/federation/supergraph.js';
import {
  type Review,
  type ReviewsSubgraph,
  type Router,
  reviewsSdl,
  startReviewsSubgraph,
  startRouter,
  supergraphOf,
} from '../support/federation.js';
import { useTestGateway } from '../support/gateway.js';
import type { GraphQLAnswer } from '../support/http.js';
import { testToken } from '../support/tokens.js';
import { subscribeSse, untilSubscribed } from '../support/subscriptions.js';

/**
 * The petstore in a supergraph, through a real router: Hive Gateway serving
 * the supergraph composed from the petstore (its SDL read from its running
 * `_service`) and a reviews service that extends Pet by its key. Every query
 * goes to the router over HTTP, as a client of the supergraph sends it.
 */

const petstore = useTestGateway({ federation: true });

let reviews: ReviewsSubgraph;
let router: Router;
const pets: Array<{ id: string; name: string; category: string; stock: number | null }> = [];
let orderId: string;
const reviewList: Review[] = [];

beforeAll(async () => {
  const dogs = await petstore.prisma.category.create({ data: { name: 'Dogs' } });
  const cats = await petstore.prisma.category.create({ data: { name: 'Cats' } });
  for (const [name, category, stock] of [
    ['Rex', dogs, 3],
    ['Tom', cats, null],
    ['Fido', dogs, 7],
  ] as const) {
    const pet = await petstore.prisma.pet.create({
      data: { name, categoryId: category.id, ...(stock === null ? {} : { inventory: { create: { quantity: stock, status: 'available' } } }) },
    });
    pets.push({ id: String(pet.id), name, category: category.name, stock });
  }
  const order = await petstore.prisma.order.create({ data: { petId: BigInt(pets[0]!.id), quantity: 1 } });
  orderId = String(order.id);
  reviewList.push(
    { id: 'r1', petId: pets[0]!.id, body: 'A very good dog.', rating: 5 },
    { id: 'r2', petId: pets[2]!.id, body: 'Fetches everything.', rating: 4 },
    { id: 'r3', petId: pets[0]!.id, body: 'Barks at the post.', rating: 3 },
  );
  reviews = await startReviewsSubgraph(reviewList);
  const supergraph = supergraphOf([
    await loadSubgraph(`petstore=${petstore.baseUrl}/graphql`),
    { name: 'reviews', sdl: reviewsSdl, url: reviews.url },
  ]);
  router = await startRouter(supergraph);
});

afterAll(async () => {
  await router?.close();
  await reviews?.close();
});

async function throughRouter<T = Record<string, unknown>>(
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<GraphQLAnswer<T> & { status: number }> {
  const response = await fetch(router.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, ...((await response.json()) as GraphQLAnswer<T>) };
}

describe('queries that cross both services', () => {
  it('pets with their reviews: the petstore lists them, the reviews service extends each by its key', async () => {
    reviews.representations.length = 0;
    const response = await throughRouter<{ pets: { nodes: Array<{ id: string; name: string; reviews: Array<{ body: string }> }> } }>(
      '{ pets(first: 10) { nodes { id name reviews { body rating } } } }',
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.pets.nodes).toEqual(
      pets.map((pet) => ({
        id: pet.id,
        name: pet.name,
        reviews: reviewList.filter((review) => review.petId === pet.id).map(({ body, rating }) => ({ body, rating })),
      })),
    );
    // The router asked the reviews service for the pets by their key, all in one _entities call.
    expect(reviews.representations).toEqual(pets.map((pet) => ({ __typename: 'Pet', id: pet.id })));
  });

  it("reviews with their pet's name, category and stock, read by the petstore's _entities in one statement", async () => {
    petstore.statements.length = 0;
    const response = await throughRouter<{
      reviews: Array<{ body: string; pet: { name: string; category: { name: string }; inventory: { quantity: number } | null } }>;
    }>('{ reviews { body pet { id name category { name } inventory { quantity } } } }');
    expect(response.errors).toBeUndefined();
    expect(response.data!.reviews).toEqual(
      reviewList.map((review) => {
        const pet = pets.find((candidate) => candidate.id === review.petId)!;
        return {
          body: review.body,
          pet: { id: pet.id, name: pet.name, category: { name: pet.category }, inventory: pet.stock === null ? null : { quantity: pet.stock } },
        };
      }),
    );
    expect(petstore.statements).toHaveLength(1);
    expect(petstore.statements[0]).toMatch(/"pets"/);
  });

  it('keeps what the supergraph does not offer out of it: the legacy lookup, and the subgraph fields', async () => {
    for (const query of [`{ getPetById(petId: "${pets[0]!.id}") { name } }`, '{ _service { sdl } }']) {
      const response = await throughRouter(query);
      expect(response.data ?? null).toBeNull();
      expect(response.errors?.[0]?.message).toMatch(/Cannot query field "(getPetById|_service)" on type "Query"/);
    }
  });
});

describe('the Authorization header reaches the petstore', () => {
  const orderQuery = `{ order(id: "ORDER") { id quantity pet { name reviews { rating } } } }`;

  it("answers Order fields with a token that has orders:read, across both services", async () => {
    const token = await testToken(['orders:read']);
    const response = await throughRouter<{ order: unknown }>(orderQuery.replace('ORDER', orderId), undefined, token);
    expect(response.errors).toBeUndefined();
    expect(response.data!.order).toEqual({ id: orderId, quantity: 1, pet: { name: 'Rex', reviews: [{ rating: 5 }, { rating: 3 }] } });

    const viaReviews = await throughRouter<{ reviews: Array<{ pet: { orders: { totalCount: number } } }> }>(
      '{ reviews { pet { orders(first: 5) { totalCount } } } }',
      undefined,
      token,
    );
    expect(viaReviews.errors).toBeUndefined();
    expect(viaReviews.data!.reviews.map((review) => review.pet.orders.totalCount)).toEqual([1, 0, 1]);
  });

  it('refuses them without a token (UNAUTHENTICATED) and with a token that lacks the scope (FORBIDDEN), codes intact', async () => {
    const anonymous = await throughRouter(orderQuery.replace('ORDER', orderId));
    expect(anonymous.data).toEqual({ order: null });
    expect(anonymous.errors).toEqual([
      expect.objectContaining({
        message: 'This needs a bearer token with the scope orders:read.',
        path: ['order'],
        extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', status: 401 }),
      }),
    ]);

    const writer = await testToken(['orders:write']);
    const forbidden = await throughRouter('{ reviews { body pet { name orders(first: 5) { totalCount } } } }', undefined, writer);
    // Pet.orders is non-null all the way up (Pet!, [Review!]!), so the refusal nulls the whole answer,
    // as it would in the petstore alone. Hive Gateway points the error at the entity the petstore
    // was asked for (reviews.N.pet), at its first field rather than at orders.
    expect(forbidden.data).toBeNull();
    expect(forbidden.errors?.length).toBeGreaterThan(0);
    for (const error of forbidden.errors ?? []) {
      expect(error.message).toBe('Your token lacks the scope orders:read.');
      expect(error.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      expect(error.path?.slice(0, 3)).toEqual(['reviews', expect.any(Number), 'pet']);
    }
  });
});

describe('errors from the petstore through the router', () => {
  it('keep their code, status and field', async () => {
    const badId = await throughRouter('{ pet(id: "not-a-number") { name } }');
    expect(badId.errors).toEqual([
      expect.objectContaining({
        path: ['pet'],
        extensions: expect.objectContaining({ code: 'VALIDATION_FAILED', status: 400, field: 'id' }),
      }),
    ]);
    const tooMany = await throughRouter('{ pets(first: 500) { nodes { name reviews { body } } } }');
    expect(tooMany.errors?.[0]).toMatchObject({
      message: 'first must be between 0 and 100, got 500.',
      extensions: { code: 'VALIDATION_FAILED', status: 400, field: 'first' },
    });
  });
});

describe('subscriptions through the router', () => {
  it("delivers a pet's stock changes with its reviews, the write sent through the router with a token", async () => {
    const pet = pets[2]!;
    const subscription = await subscribeSse<{
      inventoryChanged: { quantity: number; pet: { name: string; reviews: Array<{ body: string }> } };
    }>(router.url, `subscription { inventoryChanged(petId: "${pet.id}") { quantity pet { name reviews { body } } } }`);
    try {
      // The router opens its own subscription to the petstore: write once that is open.
      await untilSubscribed(petstore.baseUrl, 1);
      const write = await throughRouter(
        'mutation($petId: ID!) { updateInventory(petId: $petId, input: { quantity: 42 }) { quantity } }',
        { petId: pet.id },
        await testToken(['inventory:write']),
      );
      expect(write.errors).toBeUndefined();
      const event = await subscription.next();
      expect(event.errors).toBeUndefined();
      expect(event.data!.inventoryChanged).toEqual({
        quantity: 42,
        pet: { name: pet.name, reviews: reviewList.filter((review) => review.petId === pet.id).map(({ body }) => ({ body })) },
      });
    } finally {
      await subscription.close();
    }
  });

  it('refuses orderChanged without a token, with the code the petstore gives', async () => {
    const subscription = await subscribeSse(router.url, 'subscription { orderChanged { orderId } }');
    try {
      const first = await subscription.next();
      expect(first.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    } finally {
      await subscription.close();
    }
  });
});
