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

/**
 * Whether `loading` asks for more than the row's own `columns`: a relation or a relation's count
 * (`_count`), which the row a write returns does not carry. A write that deletes the row must then
 * read it with them before it goes.
 */
export function loadsBeyond(loading: Loading<object, object>, columns: readonly string[]): boolean {
  if (loading.include && Object.values(loading.include).some(Boolean)) return true;
  const selected = (loading.select ?? {}) as Record<string, unknown>;
  return Object.keys(selected).some((key) => Boolean(selected[key]) && !columns.includes(key));
}
