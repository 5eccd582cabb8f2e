import { graphql, useLazyLoadQuery } from 'react-relay';
import type { AppQuery } from './__generated__/AppQuery.graphql';
import { CategoryPets } from './components/CategoryPets';
import { PetsList } from './components/PetsList';
import { settings } from './environment';

/**
 * A small Relay app of the Petstore gateway: every pet page by page, each pet refetchable with its
 * category, stock and orders (those page by page too), and one category's pets page by page. Each
 * component asks for what it shows in a fragment of its own; Relay's store keeps every object once,
 * by its global id, so a refetch anywhere updates it everywhere it shows.
 */
export function App() {
  const data = useLazyLoadQuery<AppQuery>(
    graphql`
      query AppQuery($categoryId: ID!) {
        ...PetsList_query
        category(id: $categoryId) {
          ...CategoryPets_category
        }
      }
    `,
    { categoryId: settings.get('category') ?? '1' },
  );
  return (
    <main>
      <h1>Petstore</h1>
      <PetsList query={data} />
      {data.category && <CategoryPets category={data.category} />}
    </main>
  );
}
