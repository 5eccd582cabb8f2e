import { useTransition } from 'react';
import { graphql, useRefetchableFragment } from 'react-relay';
import type { StockLine_item$key } from './__generated__/StockLine_item.graphql';

/** A pet's stock entry, refetched on demand by its own global id. */
export function StockLine({ item }: { item: StockLine_item$key }) {
  const [data, refetch] = useRefetchableFragment(
    graphql`
      fragment StockLine_item on InventoryItem @refetchable(queryName: "StockLineRefetchQuery") {
        quantity
        status
      }
    `,
    item,
  );
  const [refreshing, startRefresh] = useTransition();
  return (
    <span>
      <span className="stock">{data.quantity}</span> in stock
      <button className="refresh-stock" disabled={refreshing} onClick={() => startRefresh(() => { refetch({}, { fetchPolicy: 'network-only' }); })}>
        Count again
      </button>
    </span>
  );
}
