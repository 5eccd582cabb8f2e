import { graphql } from './gql/index.js';

/** The operations this app sends: GraphQL Code Generator types them and lists them in its manifest. */

export const PetsPage = graphql(`
  query PetsPage($after: String) {
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

export const StockChanges = graphql(`
  subscription StockChanges {
    inventoryChanged { petId quantity status }
  }
`);
