import { graphql, useRefetchableFragment } from 'react-relay';
import type { OrderLine_order$key } from './__generated__/OrderLine_order.graphql';

/** One order of a pet. */
export function OrderLine({ order }: { order: OrderLine_order$key }) {
  const [data] = useRefetchableFragment(
    graphql`
      fragment OrderLine_order on Order @refetchable(queryName: "OrderLineRefetchQuery") {
        id
        quantity
        complete
      }
    `,
    order,
  );
  return (
    <li className="order">
      Order {data.id}: {data.quantity} {data.complete ? '(complete)' : '(open)'}
    </li>
  );
}
