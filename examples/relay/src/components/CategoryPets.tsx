import { graphql, usePaginationFragment } from 'react-relay';
import type { CategoryPets_category$key } from './__generated__/CategoryPets_category.graphql';

/** One category's pets, two at a time: its next page is asked of node(id:) by the category's global id. */
export function CategoryPets({ category }: { category: CategoryPets_category$key }) {
  const { data, loadNext, hasNext, isLoadingNext } = usePaginationFragment(
    graphql`
      fragment CategoryPets_category on Category
      @refetchable(queryName: "CategoryPetsPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" }) {
        name
        pets(first: $count, after: $cursor) @connection(key: "CategoryPets_pets") {
          edges {
            node {
              nodeId
              name
            }
          }
        }
      }
    `,
    category,
  );
  return (
    <section>
      <h2 id="category-name">{data.name}</h2>
      <ul id="category-pets">
        {data.pets.edges.map(({ node }) => (
          <li key={node.nodeId}>{node.name}</li>
        ))}
      </ul>
      {hasNext && (
        <button id="more-category-pets" disabled={isLoadingNext} onClick={() => loadNext(2)}>
          More of this category
        </button>
      )}
    </section>
  );
}
