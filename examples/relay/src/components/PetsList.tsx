import { graphql, usePaginationFragment } from 'react-relay';
import type { PetsList_query$key } from './__generated__/PetsList_query.graphql';
import { PetCard } from './PetCard';

/** Every pet, three at a time: a Relay connection (@connection), its next page by its cursor. */
export function PetsList({ query }: { query: PetsList_query$key }) {
  const { data, loadNext, hasNext, isLoadingNext } = usePaginationFragment(
    graphql`
      fragment PetsList_query on Query
      @refetchable(queryName: "PetsListPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 3 }, cursor: { type: "String" }) {
        pets(first: $count, after: $cursor) @connection(key: "PetsList_pets") {
          edges {
            node {
              nodeId
              ...PetCard_pet
            }
          }
        }
      }
    `,
    query,
  );
  return (
    <section>
      <h2>Pets</h2>
      <ul id="pets">
        {data.pets.edges.map(({ node }) => (
          <PetCard key={node.nodeId} pet={node} />
        ))}
      </ul>
      {hasNext && (
        <button id="more-pets" disabled={isLoadingNext} onClick={() => loadNext(3)}>
          More pets
        </button>
      )}
    </section>
  );
}
