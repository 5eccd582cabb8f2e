import { graphql, useRefetchableFragment } from 'react-relay';
import type { CategoryBadge_category$key } from './__generated__/CategoryBadge_category.graphql';

/** A pet's category, by name. */
export function CategoryBadge({ category }: { category: CategoryBadge_category$key }) {
  const [data] = useRefetchableFragment(
    graphql`
      fragment CategoryBadge_category on Category @refetchable(queryName: "CategoryBadgeRefetchQuery") {
        name
      }
    `,
    category,
  );
  return <span className="category">[{data.name}]</span>;
}
