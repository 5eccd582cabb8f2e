import { useTransition } from 'react';
import { graphql, useRefetchableFragment } from 'react-relay';
import type { PetCard_pet$key } from './__generated__/PetCard_pet.graphql';
import { CategoryBadge } from './CategoryBadge';
import { PetOrders } from './PetOrders';
import { StockLine } from './StockLine';

/** One pet, refetched on demand by its global id (node(id:)). */
export function PetCard({ pet }: { pet: PetCard_pet$key }) {
  const [data, refetch] = useRefetchableFragment(
    graphql`
      fragment PetCard_pet on Pet @refetchable(queryName: "PetCardRefetchQuery") {
        id
        name
        status
        category {
          ...CategoryBadge_category
        }
        inventory {
          ...StockLine_item
        }
        ...PetOrders_pet
      }
    `,
    pet,
  );
  const [refreshing, startRefresh] = useTransition();
  return (
    <li className="pet" data-pet={data.id}>
      <span className="name">{data.name}</span> <span className="status">{data.status ?? '—'}</span>{' '}
      <CategoryBadge category={data.category} /> {data.inventory ? <StockLine item={data.inventory} /> : <span className="stock">no stock</span>}
      <button className="refresh-pet" disabled={refreshing} onClick={() => startRefresh(() => { refetch({}, { fetchPolicy: 'network-only' }); })}>
        Refresh
      </button>
      <PetOrders pet={data} />
    </li>
  );
}
