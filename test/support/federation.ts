import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { createYoga } from 'graphql-yoga';
import { parse } from 'graphql';
import { composeSupergraph, type Subgraph } from '../../src/federation/supergraph.js';

/**
 * A supergraph as other teams would run it beside the petstore: a second
 * subgraph (reviews of pets, extending Pet by its key) served by yoga with
 * @apollo/subgraph, composed with the petstore by The Guild's composition
 * (the code of `npm run supergraph`), and served by Hive Gateway's runtime on
 * a free port, configured as docs/federation.md configures it.
 */

/** A review as the reviews service keeps it: it knows its pet by the pet's key only. */
export interface Review {
  id: string;
  petId: string;
  body: string;
  rating: number;
}

export const reviewsSdl = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Review {
    id: ID!
    body: String!
    rating: Int!
    pet: Pet!
  }

  type Pet @key(fields: "id") {
    id: ID!
    reviews: [Review!]!
  }

  type Query {
    reviews: [Review!]!
  }
`;

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ReviewsSubgraph extends Listening {
  /** Every `_entities` representation the router sent, in order. */
  representations: Array<Record<string, unknown>>;
}

/** The reviews service: its reviews are given; a pet with none has an empty list. */
export async function startReviewsSubgraph(reviews: Review[]): Promise<ReviewsSubgraph> {
  const representations: Array<Record<string, unknown>> = [];
  const schema = buildSubgraphSchema({
    typeDefs: parse(reviewsSdl),
    resolvers: {
      Query: { reviews: () => reviews },
      Review: { pet: (review: Review) => ({ __typename: 'Pet', id: review.petId }) },
      Pet: {
        __resolveReference: (pet: { id: string }) => {
          representations.push(pet);
          return { id: pet.id };
        },
        reviews: (pet: { id: string }) => reviews.filter((review) => review.petId === pet.id),
      },
    } as never,
  });
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, maskedErrors: false });
  const listening = await listen(createServer(yoga));
  return { ...listening, representations };
}

/** The supergraph of these subgraphs, or a failed test naming the composition errors. */
export function supergraphOf(subgraphs: Subgraph[]): string {
  const composed = composeSupergraph(subgraphs);
  if (!composed.ok) throw new Error(`composition failed:\n${composed.errors.join('\n')}`);
  return composed.supergraphSdl;
}

export type Router = Listening;

/**
 * Hive Gateway serving `supergraphSdl`, as its CLI would with docs/federation.md's
 * gateway.config.ts: the client's Authorization header passed on to every subgraph.
 */
export async function startRouter(supergraphSdl: string): Promise<Router> {
  const gateway = createGatewayRuntime({
    supergraph: supergraphSdl,
    logging: false,
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
    },
  });
  const listening = await listen(createServer(gateway));
  return {
    url: listening.url,
    async close() {
      await listening.close();
      await gateway.dispose();
    },
  };
}
