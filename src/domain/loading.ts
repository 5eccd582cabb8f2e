/**
 * What a caller wants loaded with a row a write gives back: GraphQL passes
 * what the operation selects, as Prisma's `select` (columns and relations) or
 * `include` (relations). A deleted row must be read with them before it goes:
 * afterwards there is nothing left to load them from.
 */
export interface Loading<Include, Select = never> {
  include?: Include;
  select?: Select;
}

/**
 * Whether `loading` asks for the relation `name`, which the row a write
 * returns does not carry: then the row is read again, with `loading`.
 */
export function loadsRelation(loading: Loading<object, object>, name: string): boolean {
  const wanted = loading.select ?? loading.include;
  return Boolean(wanted && (wanted as Record<string, unknown>)[name]);
}

/**
 * Reads a row with what `loading` asks for: `find` gets the `select` or the
 * `include` to pass to Prisma. A `select` from GraphQL holds every column its
 * fields read, so the row is typed as the whole model (`Row`).
 */
export async function readWith<Row, Shape>(loading: Loading<unknown, unknown>, find: (shape: Shape) => Promise<unknown>): Promise<Row> {
  return (await find((loading.select ? { select: loading.select } : { include: loading.include }) as Shape)) as Row;
}
