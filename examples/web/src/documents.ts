import { graphql } from './gql/index.js';

/** The operations this app sends: GraphQL Code Generator types them and lists them in its manifest. */

/** A live query: the gateway sends the page again whenever a write changes what it shows. */
export const PetsPage = graphql(`
  query PetsPage($after: String) @live {
    pets(first: 5, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { id name status inventory { quantity } }
    }
  }
`);

export const OrderOne = graphql(`
  mutation OrderOne($petId: ID!) {
    placeOrder(input: { petId: $petId, quantity: 1 }) {
      id
      pet { id status inventory { quantity } }
    }
  }
`);
