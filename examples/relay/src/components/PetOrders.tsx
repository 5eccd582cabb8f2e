import { graphql, usePaginationFragment } from 'react-relay';
import type { PetOrders_pet$key } from './__generated__/PetOrders_pet.graphql';
import { OrderLine } from './OrderLine';

/** A pet's orders, two at a time (they need a token with orders:read). */
export function PetOrders({ pet }: { pet: PetOrders_pet$key }) {
  const { data, loadNext, hasNext, isLoadingNext } = usePaginationFragment(
    graphql`
      fragment PetOrders_pet on Pet
      @refetchable(queryName: "PetOrdersPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" }) {
        orders(first: $count, after: $cursor) @connection(key: "PetOrders_orders") {
          edges {
            node {
              nodeId
              ...OrderLine_order
            }
          }
        }
      }
    `,
    pet,
  );
  if (data.orders.edges.length === 0) return null;
  return (
    <ul className="orders">
      {data.orders.edges.map(({ node }) => (
        <OrderLine key={node.nodeId} order={node} />
      ))}
      {hasNext && (
        <button className="more-orders" disabled={isLoadingNext} onClick={() => loadNext(2)}>
          More orders
        </button>
      )}
    </ul>
  );
}
