/**
 * The rungs of the benchmark's ladder below the gateway: the same five reads (the bench's BenchPets,
 * BenchCategories, BenchPet, BenchOrders and BenchDeepOrders documents) and every write (BenchPlaceOrder, BenchRename,
 * BenchStock, BenchCompleteOrder, BenchCancelOrder, BenchCreatePet, BenchCreateCategory,
 * BenchRenameCategory, BenchDeletePet, BenchDeleteCategory), sent as the gateway gets them and
 * answered with the same JSON the gateway answers, by less and less machinery:
 *
 * - `sql`: one SQL statement per request that builds the whole answer's JSON in PostgreSQL, on plain
 *   node:http with pg (what the data costs the database, and almost nothing else); a write calls the
 *   database function the gateway's write calls;
 * - `prisma-join` / `prisma-query` (reads): the project's own Prisma client with the selects the
 *   gateway's schema plans (relations loaded by JOIN, or by a query per relation), its rows shaped like
 *   the GraphQL answer and written with JSON.stringify on plain node:http (what Prisma costs);
 * - `domain` (writes): the project's domain function for the write (its rules and its one statement on
 *   the project's pool), its answer shaped by hand on plain node:http (what the write costs without
 *   GraphQL and the gateway's guards);
 * - `bare-yoga`: the project's schema served by a plain `createYoga`, with none of the gateway's
 *   plugins, middleware or HTTP layer (what GraphQL execution costs).
 *
 * No rung checks a token: they are what the data costs without the gateway's guards.
 * Run as: node --import tsx bench/ladder/server.ts <rung> <port> <database url>
 */
import http from 'node:http';
import { createYoga } from 'graphql-yoga';
import pg from 'pg';
import { formatPrismaCursor } from '@pothos/plugin-prisma';
import { createDatabase } from '../../src/database/client.js';
import { createCategory, createPet, deleteCategory, deletePet, updateCategory, updatePet } from '../../src/domain/catalog.js';
import { createLookups } from '../../src/domain/lookups.js';
import { noEvents } from '../../src/domain/events.js';
import { cancelOrder, completeOrder, placeOrder, updateInventory } from '../../src/domain/stock.js';
import { stockStatus } from '../../src/domain/stock-status.js';
import { legacyPolicy } from '../../src/legacy.js';
import { schema } from '../../src/schema/index.js';

type Rung = 'sql' | 'prisma-join' | 'prisma-query' | 'domain' | 'bare-yoga';
const [rung, portText, databaseUrl] = process.argv.slice(2) as [Rung, string, string];
const POOL_SIZE = 10;

interface Request {
  operationName?: string;
  variables?: Record<string, unknown>;
}
type Answer = (request: Request) => Promise<string>;

const upper = (status: string | null) => (status === null ? null : status.toUpperCase());
/** A write's input object, as the bench sends it. */
const inputOf = (request: Request) => (request.variables?.input ?? {}) as Record<string, unknown>;
const idOf = (request: Request) => BigInt(String(request.variables?.id));
const cursorOf = (id: bigint) => formatPrismaCursor({ id }, 'id');
/** The order id of a page's `after` cursor (the Prisma plugin's `GPC:I:<id>` in base64). */
const afterOf = (variables: Request['variables']) => BigInt(Buffer.from(String(variables?.after), 'base64').toString('utf8').slice('GPC:I:'.length));
const json = (value: unknown) => JSON.stringify({ data: value });

function prismaRung(strategy: 'join' | 'query'): Record<string, Answer> {
  const { prisma } = createDatabase({ url: databaseUrl, poolSize: POOL_SIZE });
  const page = <T extends { id: bigint }>(rows: T[], first: number) => ({ rows: rows.slice(0, first), hasNextPage: rows.length > first });
  return {
    async BenchPets({ variables }) {
      const first = Number(variables?.first);
      const { rows, hasNextPage } = page(
        await prisma.pet.findMany({
          relationLoadStrategy: strategy,
          take: first + 1,
          skip: 0,
          select: {
            category: { select: { id: true, name: true, description: true } },
            inventory: { select: { petId: true, quantity: true, status: true } },
            id: true,
            name: true,
            categoryId: true,
            status: true,
          },
          where: {},
          orderBy: [{ id: 'asc' }],
        }),
        first,
      );
      return json({
        pets: {
          edges: rows.map((pet) => ({
            node: {
              id: pet.id.toString(),
              name: pet.name,
              status: upper(pet.status),
              category: { id: pet.category.id.toString(), name: pet.category.name },
              inventory: pet.inventory ? { quantity: pet.inventory.quantity, status: upper(pet.inventory.status) } : null,
            },
          })),
          pageInfo: { hasNextPage, endCursor: rows.length ? cursorOf(rows.at(-1)!.id) : null },
        },
      });
    },
    async BenchCategories({ variables }) {
      const first = Number(variables?.first);
      const pets = Number(variables?.pets);
      const { rows, hasNextPage } = page(
        await prisma.category.findMany({
          relationLoadStrategy: strategy,
          take: first + 1,
          skip: 0,
          select: {
            pets: { orderBy: { id: 'asc' }, take: pets + 1, skip: 0, select: { id: true, name: true, categoryId: true, status: true } },
            id: true,
            name: true,
            description: true,
          },
          orderBy: { id: 'asc' },
        }),
        first,
      );
      return json({
        categories: {
          edges: rows.map((category) => ({
            node: {
              id: category.id.toString(),
              name: category.name,
              pets: {
                edges: category.pets
                  .slice(0, pets)
                  .map((pet) => ({ node: { id: pet.id.toString(), name: pet.name, status: upper(pet.status) } })),
              },
            },
          })),
          pageInfo: { hasNextPage, endCursor: rows.length ? cursorOf(rows.at(-1)!.id) : null },
        },
      });
    },
    async BenchPet({ variables }) {
      const pet = await prisma.pet.findUnique({
        select: { id: true, name: true, categoryId: true, status: true },
        where: { id: BigInt(String(variables?.id)) },
      });
      return json({
        pet: pet && { id: pet.id.toString(), name: pet.name, categoryId: pet.categoryId.toString(), status: upper(pet.status) },
      });
    },
    BenchOrders: ({ variables }) => ordersPage(Number(variables?.first)),
    BenchDeepOrders: ({ variables }) => ordersPage(Number(variables?.first), afterOf(variables)),
  };

  /** A page of orders from the first, or after the order `after` (Prisma's cursor, as the gateway's connection reads it). */
  async function ordersPage(first: number, after?: bigint) {
    const { rows, hasNextPage } = page(
      await prisma.order.findMany({
        take: first + 1,
        skip: after === undefined ? 0 : 1,
        ...(after === undefined ? {} : { cursor: { id: after } }),
        select: { id: true, petId: true, quantity: true, shipDate: true, complete: true },
        where: {},
        orderBy: { id: 'asc' },
      }),
      first,
    );
    return json({
      orders: {
        edges: rows.map((order) => ({
          node: {
            id: order.id.toString(),
            petId: order.petId.toString(),
            quantity: order.quantity,
            shipDate: order.shipDate?.toISOString() ?? null,
            complete: order.complete,
          },
        })),
        pageInfo: { hasNextPage, endCursor: rows.length ? cursorOf(rows.at(-1)!.id) : null },
      },
    });
  }
}

/** The JSON of each read, built in one statement; a page's cursor is the plugin's `GPC:I:<id>` in base64. */
function sqlRung(): Record<string, Answer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE });
  const cursor = (column: string) => `encode(convert_to('GPC:I:' || ${column}, 'UTF8'), 'base64')`;
  const one = async (name: string, text: string, values: unknown[]) =>
    (await pool.query<{ answer: string }>({ name, text, values })).rows[0]!.answer;
  const pets = `
    WITH page AS (SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT $1 + 1),
         shown AS (SELECT * FROM page ORDER BY id LIMIT $1)
    SELECT json_build_object('data', json_build_object('pets', json_build_object(
      'edges', coalesce((SELECT json_agg(json_build_object('node', json_build_object(
          'id', p.id::text, 'name', p.name, 'status', upper(p.status::text),
          'category', json_build_object('id', c.id::text, 'name', c.name),
          'inventory', CASE WHEN i.pet_id IS NULL THEN NULL
                            ELSE json_build_object('quantity', i.quantity, 'status', upper(i.status::text)) END
        )) ORDER BY p.id)
        FROM shown p JOIN categories c ON c.id = p.category_id LEFT JOIN inventory_items i ON i.pet_id = p.id), '[]'),
      'pageInfo', json_build_object(
        'hasNextPage', (SELECT count(*) FROM page) > $1,
        'endCursor', (SELECT ${cursor('max(id)::text')} FROM shown))
    )))::text AS answer`;
  const categories = `
    WITH page AS (SELECT id, name FROM categories ORDER BY id LIMIT $1 + 1),
         shown AS (SELECT * FROM page ORDER BY id LIMIT $1)
    SELECT json_build_object('data', json_build_object('categories', json_build_object(
      'edges', coalesce((SELECT json_agg(json_build_object('node', json_build_object(
          'id', c.id::text, 'name', c.name,
          'pets', json_build_object('edges', coalesce((
            SELECT json_agg(json_build_object('node', json_build_object('id', p.id::text, 'name', p.name, 'status', upper(p.status::text))) ORDER BY p.id)
            FROM (SELECT id, name, status FROM pets WHERE category_id = c.id ORDER BY id LIMIT $2) p), '[]'))
        )) ORDER BY c.id) FROM shown c), '[]'),
      'pageInfo', json_build_object(
        'hasNextPage', (SELECT count(*) FROM page) > $1,
        'endCursor', (SELECT ${cursor('max(id)::text')} FROM shown))
    )))::text AS answer`;
  const pet = `
    SELECT json_build_object('data', json_build_object('pet', (
      SELECT json_build_object('id', id::text, 'name', name, 'categoryId', category_id::text, 'status', upper(status::text))
      FROM pets WHERE id = $1)))::text AS answer`;
  const ordersAfter = (condition: string) => `
    WITH page AS (SELECT id, pet_id, quantity, ship_date, complete FROM orders ${condition} ORDER BY id LIMIT $1 + 1),
         shown AS (SELECT * FROM page ORDER BY id LIMIT $1)
    SELECT json_build_object('data', json_build_object('orders', json_build_object(
      'edges', coalesce((SELECT json_agg(json_build_object('node', json_build_object(
          'id', o.id::text, 'petId', o.pet_id::text, 'quantity', o.quantity,
          'shipDate', to_char(o.ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'complete', o.complete
        )) ORDER BY o.id) FROM shown o), '[]'),
      'pageInfo', json_build_object(
        'hasNextPage', (SELECT count(*) FROM page) > $1,
        'endCursor', (SELECT ${cursor('max(id)::text')} FROM shown))
    )))::text AS answer`;
  const orders = ordersAfter('');
  const deepOrders = ordersAfter('WHERE id > $2');
  // The writes: the database function the gateway's write calls, with the same arguments (src/domain).
  const rename = `
    SELECT json_build_object('data', json_build_object('updatePet', json_build_object('id', $1::bigint::text, 'name', pet_name)))::text AS answer
    FROM update_pet($1::bigint, $2::text, NULL::bigint, NULL::"PetStatus", with_name_rank => false)`;
  const stock = `
    SELECT json_build_object('data', json_build_object('updateInventory', json_build_object(
      'petId', $1::bigint::text, 'quantity', $2::integer, 'status', upper(entry_status::text))))::text AS answer
    FROM set_stock($1::bigint, $2::integer, $3::"PetStatus", $4::"PetStatus", $5::"PetStatus")`;
  const answerOf = (field: string, object: string) => `json_build_object('data', json_build_object('${field}', ${object}))::text AS answer`;
  const placeOrder = `
    SELECT ${answerOf('placeOrder', `json_build_object('id', order_id::text, 'petId', $1::bigint::text, 'quantity', $2::integer, 'complete', false)`)}
    FROM place_order($1::bigint, $2::integer, NULL::timestamptz, $3::"PetStatus", $4::"PetStatus")`;
  const closeOrder = (field: 'completeOrder' | 'cancelOrder') => `
    SELECT ${answerOf(field, `json_build_object('id', $1::bigint::text, 'petId', pet_id::text, 'quantity', quantity, 'complete', ${field === 'completeOrder'})`)}
    FROM close_order($1::bigint, ${field === 'cancelOrder'}, $2::"PetStatus", $3::"PetStatus", $4::"PetStatus")`;
  const closing = [stockStatus(1, false), stockStatus(0, true), stockStatus(0, false)];
  const createPet = `
    INSERT INTO pets (name, category_id, updated_at) VALUES ($1, $2::bigint, now())
    RETURNING ${answerOf('createPet', `json_build_object('id', id::text, 'name', name, 'status', upper(status::text), 'categoryId', category_id::text)`)}`;
  const createCategory = `
    INSERT INTO categories (name, description, updated_at) VALUES ($1, $2, now())
    RETURNING ${answerOf('createCategory', `json_build_object('id', id::text, 'name', name, 'description', description)`)}`;
  const renameCategory = `
    UPDATE categories SET name = $2, updated_at = now() WHERE id = $1::bigint
    RETURNING ${answerOf('updateCategory', `json_build_object('id', id::text, 'name', name)`)}`;
  const deletePet = `
    SELECT ${answerOf('deletePet', `json_build_object('id', $1::bigint::text, 'name', pet_name, 'status', upper(pet_status::text), 'categoryId', pet_category_id::text)`)}
    FROM delete_pet($1::bigint)`;
  const deleteCategory = `
    SELECT ${answerOf('deleteCategory', `json_build_object('id', $1::bigint::text, 'name', category_name, 'description', category_description)`)}
    FROM delete_category($1::bigint)`;
  return {
    BenchPlaceOrder: (request) =>
      one('bench_place_order', placeOrder, [String(inputOf(request).petId), Number(inputOf(request).quantity), stockStatus(1, true), stockStatus(0, true)]),
    BenchCompleteOrder: (request) => one('bench_complete_order', closeOrder('completeOrder'), [String(idOf(request)), ...closing]),
    BenchCancelOrder: (request) => one('bench_cancel_order', closeOrder('cancelOrder'), [String(idOf(request)), ...closing]),
    BenchCreatePet: (request) => one('bench_create_pet', createPet, [String(inputOf(request).name), String(inputOf(request).categoryId)]),
    BenchCreateCategory: (request) =>
      one('bench_create_category', createCategory, [String(inputOf(request).name), (inputOf(request).description as string | undefined) ?? null]),
    BenchRenameCategory: (request) => one('bench_rename_category', renameCategory, [String(idOf(request)), String(request.variables?.name)]),
    BenchDeletePet: (request) => one('bench_delete_pet', deletePet, [String(idOf(request))]),
    BenchDeleteCategory: (request) => one('bench_delete_category', deleteCategory, [String(idOf(request))]),
    BenchRename: ({ variables }) => one('bench_rename', rename, [String(variables?.id), String(variables?.name)]),
    BenchStock: ({ variables }) =>
      one('bench_stock', stock, [String(variables?.petId), Number(variables?.quantity), stockStatus(1, false), stockStatus(0, true), stockStatus(0, false)]),
    BenchPets: ({ variables }) => one('bench_pets', pets, [Number(variables?.first)]),
    BenchCategories: ({ variables }) => one('bench_categories', categories, [Number(variables?.first), Number(variables?.pets)]),
    BenchPet: ({ variables }) => one('bench_pet', pet, [String(variables?.id)]),
    BenchOrders: ({ variables }) => one('bench_orders', orders, [Number(variables?.first)]),
    BenchDeepOrders: ({ variables }) => one('bench_deep_orders', deepOrders, [Number(variables?.first), String(afterOf(variables))]),
  };
}

const orderAnswer = (order: { id: bigint; petId: bigint; quantity: number; complete: boolean }) => ({
  id: order.id.toString(),
  petId: order.petId.toString(),
  quantity: order.quantity,
  complete: order.complete,
});
const petAnswer = (pet: { id: bigint; name: string; status: string | null; categoryId: bigint }) => ({
  id: pet.id.toString(),
  name: pet.name,
  status: upper(pet.status),
  categoryId: pet.categoryId.toString(),
});

const categoryAnswer = (category: { id: bigint; name: string; description: string | null }) => ({
  id: category.id.toString(),
  name: category.name,
  description: category.description,
});

/** The writes through the project's domain functions, on its pool, answered as the gateway answers them. */
function domainRung(): Record<string, Answer> {
  const { prisma } = createDatabase({ url: databaseUrl, poolSize: POOL_SIZE });
  return {
    async BenchRename({ variables }) {
      const pet = await updatePet(prisma, noEvents, BigInt(String(variables?.id)), { name: String(variables?.name) });
      return json({ updatePet: { id: pet.id.toString(), name: pet.name } });
    },
    async BenchStock({ variables }) {
      const entry = await updateInventory(prisma, noEvents, BigInt(String(variables?.petId)), { quantity: Number(variables?.quantity) });
      return json({ updateInventory: { petId: entry.petId.toString(), quantity: entry.quantity, status: upper(entry.status) } });
    },
    async BenchPlaceOrder(request) {
      const input = inputOf(request);
      const order = await placeOrder(prisma, noEvents, { petId: BigInt(String(input.petId)), quantity: Number(input.quantity) });
      return json({ placeOrder: orderAnswer(order) });
    },
    async BenchCompleteOrder(request) {
      return json({ completeOrder: orderAnswer(await completeOrder(prisma, noEvents, idOf(request))) });
    },
    async BenchCancelOrder(request) {
      return json({ cancelOrder: orderAnswer(await cancelOrder(prisma, noEvents, idOf(request))) });
    },
    async BenchCreatePet(request) {
      const input = inputOf(request);
      return json({ createPet: petAnswer(await createPet(prisma, { name: String(input.name), categoryId: BigInt(String(input.categoryId)) })) });
    },
    async BenchCreateCategory(request) {
      const input = inputOf(request);
      const category = await createCategory(prisma, { name: String(input.name), description: (input.description as string | undefined) ?? null });
      return json({ createCategory: categoryAnswer(category) });
    },
    async BenchRenameCategory(request) {
      const category = await updateCategory(prisma, idOf(request), { name: String(request.variables?.name) });
      return json({ updateCategory: { id: category.id.toString(), name: category.name } });
    },
    async BenchDeletePet(request) {
      return json({ deletePet: petAnswer(await deletePet(prisma, idOf(request))) });
    },
    async BenchDeleteCategory(request) {
      return json({ deleteCategory: categoryAnswer(await deleteCategory(prisma, idOf(request))) });
    },
  };
}

function serveAnswers(answers: Record<string, Answer>) {
  return http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: Request & { query?: string };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        response.writeHead(400).end();
        return;
      }
      const answer = body.operationName ? answers[body.operationName] : answers[/(query|mutation)\s+(\w+)/.exec(body.query ?? '')?.[2] ?? ''];
      // Readiness probes of the bench's process runner send `{ __typename }`.
      if (!answer) {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"__typename":"Query"}}');
        return;
      }
      answer(body).then(
        (text) => response.writeHead(200, { 'content-type': 'application/json' }).end(text),
        (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
    });
  });
}

function bareYoga() {
  const { prisma } = createDatabase({ url: databaseUrl, poolSize: POOL_SIZE });
  const lookups = createLookups();
  const legacy = legacyPolicy({ sunsetDate: '2099-12-31', afterSunset: 'serve', brownouts: [] }, { successor: '/graphql', policy: '/openapi.json' });
  const yoga = createYoga({
    schema,
    graphiql: false,
    logging: false,
    // What the schema's resolvers read from the context, and nothing more: orders need orders:read, the writes their scopes.
    context: () => ({
      prisma,
      lookups,
      requestId: 'bench',
      principal: {
        subject: 'bench',
        scopes: new Set(['orders:read', 'orders:write', 'catalog:write', 'inventory:write']),
        expiresAt: undefined,
        client: 'bench',
      },
      events: noEvents,
      pubsub: undefined,
      legacy,
    }),
  });
  return http.createServer(yoga);
}

const server =
  rung === 'bare-yoga'
    ? bareYoga()
    : serveAnswers(rung === 'sql' ? sqlRung() : rung === 'domain' ? domainRung() : prismaRung(rung === 'prisma-join' ? 'join' : 'query'));
server.listen(Number(portText), '127.0.0.1', () => console.log(`ladder rung ${rung} on http://127.0.0.1:${portText}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
