import { COUNT_LIMIT } from '../../src/pothos-plugins/paging.js';
import { dataSet } from './data.js';
import { deletableCategories, deletablePets, openOrders, type RowPool, renamableCategories } from './row-pools.js';

/**
 * The benchmark's operations, each as our gateway serves it and as
 * PostGraphile 5 (Amber preset) serves the same data. PostGraphile's field
 * names were read from its schema by introspection (Amber in 5.1: `allPets`,
 * `petByRowId`, `rowId` for the primary key, `id` for its global Node id,
 * relations named `categoryByCategoryId`, `inventoryItemByPetId`,
 * `petsByCategoryId`); `checkPostGraphileSchema` checks them again at run
 * time, and the counting pass checks that both answer with the same data.
 */
export type Target = 'gateway' | 'postgraphile';

/** How many requests a traced gateway of the bench samples: one in ten, or all. */
export type TraceLevel = 'sampled' | 'all';
export const traceRatios: Record<TraceLevel, string> = { sampled: '0.1', all: '1' };

/** What `supply` is asked to make ready: for so many requests, or for so long a drive, to the server at `url`. */
export interface Need {
  requests?: number;
  durationS?: number;
  url: string;
}

export interface Variant {
  /** Unique; a PostGraphile variant shared by two operations is measured once. */
  key: string;
  target: Target;
  /** What is sent, in a few words. */
  label: string;
  kind: 'graphql' | 'rest';
  write: boolean;
  /** Arguments change with every request (random ids); the others send the same request each time. */
  randomized?: boolean;
  /**
   * A write of a row of its own every request (a new row, or one a pool made for it), so that no two
   * answers are the same, even with `fixed` arguments: the ladder compares its rungs' answers with
   * every string masked.
   */
  rowOfItsOwn?: boolean;
  /** The gateway asks for a bearer token with a scope here (orders:read, orders:write); public reads go without. */
  needsToken?: boolean;
  /** Sent to the second gateway, the one started with its response cache on (RESPONSE_CACHE_TTL_MS). */
  responseCache?: boolean;
  /**
   * Sent to the gateway with its response cache on and Redis (REDIS_URL), as instances share it: every
   * hit reads the write log there, and the rate limit and cost budget are counted there.
   */
  sharedCache?: boolean;
  /** Sent to the gateway started as a Federation subgraph (FEDERATION=true), as a router would. */
  federation?: boolean;
  /** Sent to the gateway that estimates every request's cost afresh (COST_ESTIMATES_MAX_ENTRIES=0). */
  uncachedCost?: boolean;
  /** Sent to a gateway that sends traces to an OTLP sink: of one request in ten (`sampled`) or of every one (`all`). */
  traces?: TraceLevel;
  /** GraphQL: the document (variables come from `variables`). */
  query?: string;
  /** Per request; `fixed` asks for the arguments of the same-data check (no randomness). */
  variables?: (fixed?: boolean) => Record<string, unknown>;
  /** REST: the path of each request. */
  restPath?: (fixed?: boolean) => string;
  /**
   * Makes ready, before they are sent and outside any measurement, what the next requests to the server
   * at `url` need: open orders to close, a cursor to ask it for.
   */
  supply?: (need: Need) => Promise<void>;
  /** The answer reduced to the data both servers must agree on (undefined: not compared). */
  normalize?: (body: unknown) => unknown;
  /**
   * A refusal is the answer, carrying this text (an error code): what bad input costs. Any other
   * answer is counted as an error; without it, any GraphQL error is.
   */
  refused?: string;
}

export interface Operation {
  id: string;
  title: string;
  gateway: Variant;
  postgraphile: Variant | undefined;
  /** Said in the report beside the PostGraphile column. */
  note?: string;
}

const randomInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
/** Pets the reads ask for by id (the ones placeOrder never touches); pet 42 for the same-data check. */
export const randomReadPetId = (fixed?: boolean) => (fixed ? 42 : randomInt(1, dataSet.readPets));
/** Pets kept for placeOrder, with a large stock. */
export const randomOrderPetId = () => randomInt(dataSet.readPets + 1, dataSet.pets);

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);
const str = (value: unknown) => (value === null || value === undefined ? value : String(value));
const time = (value: unknown) => (typeof value === 'string' ? new Date(value).toISOString() : value);
const nodes = (connection: unknown) => list(obj(connection).edges).map((edge) => obj(obj(edge).node));
const hasNext = (connection: unknown) => obj(obj(connection).pageInfo).hasNextPage;
const data = (body: unknown) => obj(obj(body).data);

// 1. pets(first: 50) with each pet's category and inventory
const petsGateway = /* GraphQL */ `
  query BenchPets($first: Int!) {
    pets(first: $first) {
      edges { node { id name status category { id name } inventory { quantity status } } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const petsPostGraphile = /* GraphQL */ `
  query BenchPets($first: Int!) {
    allPets(first: $first, orderBy: PRIMARY_KEY_ASC) {
      edges {
        node { rowId name status categoryByCategoryId { rowId name } inventoryItemByPetId { quantity status } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const petRow = (pet: Json, category: Json, inventory: Json | null) => [
  str(pet.id ?? pet.rowId),
  pet.name,
  lower(pet.status),
  str(category.id ?? category.rowId),
  category.name,
  inventory ? [inventory.quantity, lower(inventory.status)] : null,
];

// 2. categories(first: 20) with each category's first 10 pets
const categoriesGateway = /* GraphQL */ `
  query BenchCategories($first: Int!, $pets: Int!) {
    categories(first: $first) {
      edges { node { id name pets(first: $pets) { edges { node { id name status } } } } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const categoriesPostGraphile = /* GraphQL */ `
  query BenchCategories($first: Int!, $pets: Int!) {
    allCategories(first: $first, orderBy: PRIMARY_KEY_ASC) {
      edges {
        node {
          rowId
          name
          petsByCategoryId(first: $pets, orderBy: PRIMARY_KEY_ASC) { edges { node { rowId name status } } }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const categoryRow = (category: Json, pets: unknown) => [
  str(category.id ?? category.rowId),
  category.name,
  nodes(pets).map((pet) => [str(pet.id ?? pet.rowId), pet.name, lower(pet.status)]),
];

// 3. one pet by id: the fields GET /pets/{petId} answers with (id, name, categoryId, status)
const petGateway = /* GraphQL */ `
  query BenchPet($id: ID!) {
    pet(id: $id) { id name categoryId status }
  }`;
const petPostGraphile = /* GraphQL */ `
  query BenchPet($id: BigInt!) {
    petByRowId(rowId: $id) { rowId name categoryId status }
  }`;
const petByIdRow = (pet: Json) => [str(pet.id ?? pet.rowId), pet.name, str(pet.categoryId), lower(pet.status)];

// 4. the first page of 50 orders
const ordersGateway = /* GraphQL */ `
  query BenchOrders($first: Int!) {
    orders(first: $first) {
      edges { node { id petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const ordersPostGraphile = /* GraphQL */ `
  query BenchOrders($first: Int!) {
    allOrders(first: $first, orderBy: PRIMARY_KEY_ASC) {
      edges { node { rowId petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const orderRow = (order: Json) => [
  str(order.id ?? order.rowId),
  str(order.petId),
  order.quantity,
  time(order.shipDate),
  order.complete,
];

// 4d. the page of 50 orders after the 10,000th: each server's own cursor for that row
/** How many rows in the deep page starts. */
export const DEEP_ROWS = 10_000;
const deepOrdersGateway = /* GraphQL */ `
  query BenchDeepOrders($first: Int!, $after: String!) {
    orders(first: $first, after: $after) {
      edges { node { id petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const deepOrdersPostGraphile = /* GraphQL */ `
  query BenchDeepOrders($first: Int!, $after: Cursor!) {
    allOrders(first: $first, after: $after, orderBy: PRIMARY_KEY_ASC) {
      edges { node { rowId petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
/** The gateway's cursors are the row's id (src/pothos-plugins/paging.ts); orders have ids 1, 2, 3… */
const gatewayCursorOfRow = (row: number) => Buffer.from(`GPC:I:${row}`).toString('base64');
/** PostGraphile's cursor of the 10,000th order, as it hands it out (its cursors digest its ordering). */
let postGraphileDeepCursor: string | undefined;
async function postGraphileCursorOfRow(url: string, row: number): Promise<string> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query { allOrders(first: 1, offset: ${row - 1}, orderBy: PRIMARY_KEY_ASC) { edges { cursor node { rowId } } } }`,
    }),
  });
  const edge = obj(list(obj(data(await response.json()).allOrders).edges)[0]);
  if (String(obj(edge.node).rowId) !== String(row)) throw new Error(`PostGraphile's order ${row} has no cursor: ${JSON.stringify(edge)}`);
  return String(edge.cursor);
}

// 4t. the first page of 50 orders with totalCount
const countedOrdersGateway = /* GraphQL */ `
  query BenchCountedOrders($first: Int!) {
    orders(first: $first) {
      totalCount
      edges { node { id petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
const countedOrdersPostGraphile = /* GraphQL */ `
  query BenchCountedOrders($first: Int!) {
    allOrders(first: $first, orderBy: PRIMARY_KEY_ASC) {
      totalCount
      edges { node { rowId petId quantity shipDate complete } }
      pageInfo { hasNextPage endCursor }
    }
  }`;

// 5. placeOrder: one unit of a pet kept for orders (PostGraphile: the function's row is the payload's `result`)
const placeOrderGateway = /* GraphQL */ `
  mutation BenchPlaceOrder($input: PlaceOrderInput!) {
    placeOrder(input: $input) { id petId quantity complete }
  }`;
const placeOrderPostGraphile = /* GraphQL */ `
  mutation BenchPlaceOrder($input: BenchPlaceOrderInput!) {
    benchPlaceOrder(input: $input) { result { rowId petId quantity complete } }
  }`;

const renameGateway = /* GraphQL */ `
  mutation BenchRename($id: ID!, $name: String!) {
    updatePet(id: $id, input: { name: $name }) { id name }
  }`;
const renamePostGraphile = /* GraphQL */ `
  mutation BenchRename($id: BigInt!, $name: String!) {
    updatePetByRowId(input: { rowId: $id, petPatch: { name: $name } }) { pet { rowId name } }
  }`;
/** A new name for one of placeOrder's pets (no read asks for them), different every time; `fixed`: the same rename, to compare answers. */
let renames = 0;
const renameVariables = (fixed?: boolean) =>
  fixed ? { id: String(dataSet.readPets + 1), name: 'bench rename' } : { id: String(randomOrderPetId()), name: `bench ${++renames}` };
const renamedRow = (pet: Json) => [str(pet.id ?? pet.rowId), pet.name];

const stockGateway = /* GraphQL */ `
  mutation BenchStock($petId: ID!, $quantity: Int!) {
    updateInventory(petId: $petId, input: { quantity: $quantity }) { petId quantity status }
  }`;
const stockPostGraphile = /* GraphQL */ `
  mutation BenchStock($petId: BigInt!, $quantity: Int!) {
    updateInventoryItemByPetId(input: { petId: $petId, inventoryItemPatch: { quantity: $quantity } }) { inventoryItem { petId quantity status } }
  }`;
/** A stock count for one of placeOrder's pets, never below what its orders leave; `fixed`: the same count, to compare answers. */
const stockVariables = (fixed?: boolean) =>
  fixed ? { petId: String(dataSet.readPets + 1), quantity: 150_000 } : { petId: String(randomOrderPetId()), quantity: randomInt(100_000, 200_000) };
const stockRow = (entry: Json) => [str(entry.petId), entry.quantity, lower(entry.status)];
/** A count no stock can have: refused by both servers, nothing written. */
const refusedStockVariables = () => ({ petId: String(randomOrderPetId()), quantity: -1 });

const closeGateway = (mutation: string) => /* GraphQL */ `
  mutation Bench${mutation[0]!.toUpperCase()}${mutation.slice(1)}($id: ID!) {
    ${mutation}(id: $id) { id petId quantity complete }
  }`;
const closePostGraphile = (mutation: string) => /* GraphQL */ `
  mutation Bench${mutation[0]!.toUpperCase()}${mutation.slice(1)}($id: BigInt!) {
    bench${mutation[0]!.toUpperCase()}${mutation.slice(1)}(input: { orderId: $id }) { result { rowId petId quantity complete } }
  }`;

/**
 * Rows 8 and 9: one write that closes an open order, the same on both servers but for the mutation's
 * name. Each variant closes orders of its own pool (bench/lib/row-pools.ts), one new order a request.
 */
function closingOperation(id: string, mutation: 'completeOrder' | 'cancelOrder', title: string): Operation {
  const variant = (target: Target): Variant =>
    pooledVariant(
      target,
      mutation,
      target === 'gateway' ? `GraphQL ${mutation}` : `GraphQL bench${mutation[0]!.toUpperCase()}${mutation.slice(1)} (SQL function)`,
      target === 'gateway' ? closeGateway(mutation) : closePostGraphile(mutation),
      openOrders,
      (order) => ({ id: order }),
    );
  return {
    id,
    title,
    gateway: variant('gateway'),
    postgraphile: variant('postgraphile'),
    note:
      `PostGraphile generates no ${mutation}; its column is bench_${mutation === 'completeOrder' ? 'complete' : 'cancel'}_order(), ` +
      'a PL/pgSQL function written for this benchmark with the gateway’s rules (lock pet, lock order, check, close, ' +
      'settle the stock and status), exposed as a mutation; each request closes an order opened for it before the cell',
  };
}

// 10. createPet: a new pet in the last category, named to sort after every other (the reads never page that far)
const createPetGateway = /* GraphQL */ `
  mutation BenchCreatePet($input: NewPet!) {
    createPet(input: $input) { id name status categoryId }
  }`;
const createPetPostGraphile = /* GraphQL */ `
  mutation BenchCreatePet($name: String!, $categoryId: BigInt!, $now: Datetime!) {
    createPet(input: { pet: { name: $name, categoryId: $categoryId, updatedAt: $now } }) { pet { rowId name status categoryId } }
  }`;
let created = 0;
const newPetName = () => `zz bench ${++created}`;

// 11. createCategory: a new category, named to sort after every other (the reads never page that far)
const createCategoryGateway = /* GraphQL */ `
  mutation BenchCreateCategory($input: NewCategory!) {
    createCategory(input: $input) { id name description }
  }`;
const createCategoryPostGraphile = /* GraphQL */ `
  mutation BenchCreateCategory($name: String!, $description: String, $now: Datetime!) {
    createCategory(input: { category: { name: $name, description: $description, updatedAt: $now } }) { category { rowId name description } }
  }`;
let createdCategories = 0;
const newCategoryName = () => `zz bench category ${++createdCategories}`;

// 12. updateCategory: a rename of one of the categories made for it (no read asks for them)
const renameCategoryGateway = /* GraphQL */ `
  mutation BenchRenameCategory($id: ID!, $name: String!) {
    updateCategory(id: $id, input: { name: $name }) { id name }
  }`;
const renameCategoryPostGraphile = /* GraphQL */ `
  mutation BenchRenameCategory($id: BigInt!, $name: String!) {
    updateCategoryByRowId(input: { rowId: $id, categoryPatch: { name: $name } }) { category { rowId name } }
  }`;
let renamedCategories = 0;

// 13. deletePet: a pet made for it (bench/lib/row-pools.ts), one a request
const deletePetGateway = /* GraphQL */ `
  mutation BenchDeletePet($id: ID!) {
    deletePet(id: $id) { id name status categoryId }
  }`;
const deletePetPostGraphile = /* GraphQL */ `
  mutation BenchDeletePet($id: BigInt!) {
    deletePetByRowId(input: { rowId: $id }) { pet { rowId name status categoryId } }
  }`;

// 14. deleteCategory: a category made for it, one a request
const deleteCategoryGateway = /* GraphQL */ `
  mutation BenchDeleteCategory($id: ID!) {
    deleteCategory(id: $id) { id name description }
  }`;
const deleteCategoryPostGraphile = /* GraphQL */ `
  mutation BenchDeleteCategory($id: BigInt!) {
    deleteCategoryByRowId(input: { rowId: $id }) { category { rowId name description } }
  }`;

/**
 * A write of rows 8, 9 and 12 to 14 on one side: each variant takes the rows it writes from a pool of its own
 * (bench/lib/row-pools.ts), made ready before each cell; `variables` makes a request's from the
 * row's id.
 */
function pooledVariant(
  target: Target,
  name: string,
  label: string,
  query: string,
  pool: () => RowPool,
  variables: (id: string) => Record<string, unknown>,
): Variant {
  const rows = pool();
  return {
    key: `${target}:${name}`,
    target,
    label,
    kind: 'graphql',
    write: true,
    randomized: true,
    rowOfItsOwn: true,
    ...(target === 'gateway' ? { needsToken: true } : {}),
    query,
    variables: () => variables(rows.take()),
    supply: (need) => rows.supply(need),
  };
}

/** The fields the PostGraphile documents above rely on: [type, field]. */
export const postGraphileFields: Array<[string, string]> = [
  ['Query', 'allPets'],
  ['Query', 'allCategories'],
  ['Query', 'allOrders'],
  ['Query', 'petByRowId'],
  ['Pet', 'rowId'],
  ['Pet', 'categoryId'],
  ['Pet', 'categoryByCategoryId'],
  ['Pet', 'inventoryItemByPetId'],
  ['Category', 'petsByCategoryId'],
  ['Order', 'rowId'],
  ['Order', 'petId'],
  ['Order', 'shipDate'],
  ['Mutation', 'benchPlaceOrder'],
  ['BenchPlaceOrderPayload', 'result'],
  ['Mutation', 'updatePetByRowId'],
  ['UpdatePetPayload', 'pet'],
  ['Mutation', 'updateInventoryItemByPetId'],
  ['UpdateInventoryItemPayload', 'inventoryItem'],
  ['Mutation', 'createPet'],
  ['CreatePetPayload', 'pet'],
  ['Mutation', 'benchCompleteOrder'],
  ['BenchCompleteOrderPayload', 'result'],
  ['Mutation', 'benchCancelOrder'],
  ['BenchCancelOrderPayload', 'result'],
  ['Mutation', 'createCategory'],
  ['CreateCategoryPayload', 'category'],
  ['Mutation', 'updateCategoryByRowId'],
  ['UpdateCategoryPayload', 'category'],
  ['Mutation', 'deletePetByRowId'],
  ['DeletePetPayload', 'pet'],
  ['Mutation', 'deleteCategoryByRowId'],
  ['DeleteCategoryPayload', 'category'],
];

const pgPet: Variant = {
  key: 'postgraphile:pet',
  target: 'postgraphile',
  label: 'GraphQL petByRowId(rowId:)',
  kind: 'graphql',
  write: false,
  randomized: true,
  query: petPostGraphile,
  variables: (fixed) => ({ id: String(randomReadPetId(fixed)) }),
  normalize: (body) => petByIdRow(obj(data(body).petByRowId)),
};
const pgOrders: Variant = {
  key: 'postgraphile:orders',
  target: 'postgraphile',
  label: 'GraphQL allOrders(first: 50)',
  kind: 'graphql',
  write: false,
  query: ordersPostGraphile,
  variables: () => ({ first: 50 }),
  normalize: (body) => nodes(data(body).allOrders).map(orderRow),
};

/** The TTL of the response-cached gateway: longer than the load pass, so only writes could drop an answer. */
export const benchResponseCacheTtlMs = 600_000;

/**
 * The same anonymous read sent to the gateway with its response cache on. The
 * bench repeats one request, so after the first each is a hit: the cache's
 * best case, beside the uncached operation (its worst case).
 */
function withSharedCache(operation: Operation, id: string): Operation {
  const cached = withResponseCache(operation, id);
  return {
    ...cached,
    title: `${operation.title}, response cache on, shared through Redis`,
    gateway: {
      ...cached.gateway,
      key: `${operation.gateway.key}:cached-redis`,
      label: `${operation.gateway.label}, response cache on, Redis`,
      sharedCache: true,
    },
    note:
      `${cached.note}; with REDIS_URL, as instances run it: each hit reads the write log in Redis (with the cost ` +
      'budget\'s step in the same round trip), and the rate limit counts there too'
  };
}

function withResponseCache(operation: Operation, id: string): Operation {
  return {
    ...operation,
    id,
    title: `${operation.title}, response cache on`,
    gateway: {
      ...operation.gateway,
      key: `${operation.gateway.key}:cached`,
      label: `${operation.gateway.label}, response cache on`,
      responseCache: true,
    },
    note:
      `the gateway with RESPONSE_CACHE_TTL_MS=${benchResponseCacheTtlMs} (answers kept until a write they depend on or the TTL), ` +
      `sent the same request as ${operation.id} over and over; the PostGraphile column is the same cell as ${operation.id}`,
  };
}

/**
 * Row 1 to a gateway that estimates every request's cost afresh (COST_ESTIMATES_MAX_ENTRIES=0):
 * beside row 1, whose estimate is kept per document and variable shape, what the Cost
 * Directives' analysis costs per request.
 */
function withUncachedCostEstimates(operation: Operation, id: string): Operation {
  return {
    ...operation,
    id,
    title: `${operation.title}, cost estimated every request`,
    gateway: {
      ...operation.gateway,
      key: `${operation.gateway.key}:uncosted`,
      label: `${operation.gateway.label}, COST_ESTIMATES_MAX_ENTRIES=0`,
      uncachedCost: true,
    },
    note:
      `the gateway with COST_ESTIMATES_MAX_ENTRIES=0, so the static cost analysis walks the document on every request; ` +
      `its difference to ${operation.id} is what the analysis costs per request. The PostGraphile column is the same cell as ${operation.id}`,
  };
}

/**
 * The same read sent to a gateway that sends traces (OpenTelemetry, OTLP/HTTP protobuf) to a sink that
 * takes and discards them: what tracing costs beside the untraced row.
 */
function withTraces(operation: Operation, id: string, traces: TraceLevel): Operation {
  const share = traces === 'all' ? 'every request' : 'one request in ten';
  return {
    ...operation,
    id,
    title: `${operation.title}, traces of ${share}`,
    gateway: {
      ...operation.gateway,
      key: `${operation.gateway.key}:traces-${traces}`,
      label: `${operation.gateway.label}, traces of ${share}`,
      traces,
    },
    note:
      `the gateway with OTEL_EXPORTER_OTLP_ENDPOINT (an OTLP sink in the bench process that discards what it gets) and ` +
      `OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=${traceRatios[traces]}; the untraced row is ${operation.id}; ` +
      `the PostGraphile column is the same cell as ${operation.id}`,
  };
}

const baseOperations: Operation[] = [
  {
    id: '1',
    title: 'pets(first: 50) + category + inventory',
    gateway: {
      key: 'gateway:pets',
      target: 'gateway',
      label: 'GraphQL pets(first: 50)',
      kind: 'graphql',
      write: false,
      query: petsGateway,
      variables: () => ({ first: 50 }),
      normalize: (body) => [
        nodes(data(body).pets).map((pet) => petRow(pet, obj(pet.category), pet.inventory ? obj(pet.inventory) : null)),
        hasNext(data(body).pets),
      ],
    },
    postgraphile: {
      key: 'postgraphile:pets',
      target: 'postgraphile',
      label: 'GraphQL allPets(first: 50)',
      kind: 'graphql',
      write: false,
      query: petsPostGraphile,
      variables: () => ({ first: 50 }),
      normalize: (body) => [
        nodes(data(body).allPets).map((pet) =>
          petRow(
            pet,
            obj(pet.categoryByCategoryId),
            pet.inventoryItemByPetId ? obj(pet.inventoryItemByPetId) : null,
          ),
        ),
        hasNext(data(body).allPets),
      ],
    },
  },
  {
    id: '2',
    title: 'categories(first: 20) + first 10 pets each',
    gateway: {
      key: 'gateway:categories',
      target: 'gateway',
      label: 'GraphQL categories(first: 20)',
      kind: 'graphql',
      write: false,
      query: categoriesGateway,
      variables: () => ({ first: 20, pets: 10 }),
      normalize: (body) => [
        nodes(data(body).categories).map((category) => categoryRow(category, category.pets)),
        hasNext(data(body).categories),
      ],
    },
    postgraphile: {
      key: 'postgraphile:categories',
      target: 'postgraphile',
      label: 'GraphQL allCategories(first: 20)',
      kind: 'graphql',
      write: false,
      query: categoriesPostGraphile,
      variables: () => ({ first: 20, pets: 10 }),
      normalize: (body) => [
        nodes(data(body).allCategories).map((category) => categoryRow(category, category.petsByCategoryId)),
        hasNext(data(body).allCategories),
      ],
    },
  },
  {
    id: '3a',
    title: 'one pet by id, GraphQL',
    gateway: {
      key: 'gateway:pet',
      target: 'gateway',
      label: 'GraphQL pet(id:)',
      kind: 'graphql',
      write: false,
      randomized: true,
      query: petGateway,
      variables: (fixed) => ({ id: String(randomReadPetId(fixed)) }),
      normalize: (body) => petByIdRow(obj(data(body).pet)),
    },
    postgraphile: pgPet,
  },
  {
    id: '3b',
    title: 'one pet by id, REST GET /pets/{petId}',
    gateway: {
      key: 'gateway:pet-rest',
      target: 'gateway',
      label: 'GET /pets/{petId}',
      kind: 'rest',
      write: false,
      randomized: true,
      restPath: (fixed) => `/pets/${randomReadPetId(fixed)}`,
      normalize: (body) => petByIdRow(obj(body)),
    },
    postgraphile: pgPet,
    note: "PostGraphile column: its GraphQL petByRowId (same cell as 3a); it has no REST routes",
  },
  {
    id: '4a',
    title: 'orders, REST GET /store/orders?limit=50',
    gateway: {
      key: 'gateway:orders-rest',
      target: 'gateway',
      label: 'GET /store/orders?limit=50',
      kind: 'rest',
      write: false,
      needsToken: true,
      restPath: () => '/store/orders?limit=50',
      normalize: (body) => list(body).map((order) => orderRow(obj(order))),
    },
    postgraphile: pgOrders,
    note: 'PostGraphile column: its GraphQL allOrders(first: 50) (same cell as 4b)',
  },
  {
    id: '4b',
    title: 'orders(first: 50), GraphQL',
    gateway: {
      key: 'gateway:orders',
      target: 'gateway',
      label: 'GraphQL orders(first: 50)',
      kind: 'graphql',
      write: false,
      needsToken: true,
      query: ordersGateway,
      variables: () => ({ first: 50 }),
      normalize: (body) => nodes(data(body).orders).map(orderRow),
    },
    postgraphile: pgOrders,
  },
  {
    id: '4d',
    title: `orders(first: 50) after the ${DEEP_ROWS.toLocaleString('en-US')}th, GraphQL`,
    gateway: {
      key: 'gateway:deep-orders',
      target: 'gateway',
      label: `GraphQL orders(first: 50, after: the cursor of order ${DEEP_ROWS})`,
      kind: 'graphql',
      write: false,
      needsToken: true,
      query: deepOrdersGateway,
      variables: () => ({ first: 50, after: gatewayCursorOfRow(DEEP_ROWS) }),
      normalize: (body) => nodes(data(body).orders).map(orderRow),
    },
    postgraphile: {
      key: 'postgraphile:deep-orders',
      target: 'postgraphile',
      label: `GraphQL allOrders(first: 50, after: its cursor of order ${DEEP_ROWS})`,
      kind: 'graphql',
      write: false,
      query: deepOrdersPostGraphile,
      supply: async ({ url }) => {
        postGraphileDeepCursor ??= await postGraphileCursorOfRow(url, DEEP_ROWS);
      },
      variables: () => ({ first: 50, after: postGraphileDeepCursor }),
      normalize: (body) => nodes(data(body).allOrders).map(orderRow),
    },
    note: 'each server with the cursor it hands out for that row (PostGraphile’s asked of it once, before the cell)',
  },
  {
    id: '4t',
    title: 'orders(first: 50) with totalCount, GraphQL',
    gateway: {
      key: 'gateway:counted-orders',
      target: 'gateway',
      label: 'GraphQL orders(first: 50) { totalCount … }',
      kind: 'graphql',
      write: false,
      needsToken: true,
      query: countedOrdersGateway,
      variables: () => ({ first: 50 }),
      normalize: (body) => [nodes(data(body).orders).map(orderRow), Number(obj(data(body).orders).totalCount)],
    },
    postgraphile: {
      key: 'postgraphile:counted-orders',
      target: 'postgraphile',
      label: 'GraphQL allOrders(first: 50) { totalCount … }',
      kind: 'graphql',
      write: false,
      query: countedOrdersPostGraphile,
      variables: () => ({ first: 50 }),
      // It counts every row; the gateway up to COUNT_LIMIT, saying AT_LEAST beyond (the same answer below it).
      normalize: (body) => [nodes(data(body).allOrders).map(orderRow), Math.min(Number(obj(data(body).allOrders).totalCount), COUNT_LIMIT)],
    },
    note:
      `the gateway reads the count of orders its database keeps (the list has no filter; docs/performance.md, Counts), told up to ` +
      `${COUNT_LIMIT.toLocaleString('en-US')} (totalCountPrecision AT_LEAST beyond), PostGraphile counts every row`,
  },
  {
    id: '5',
    title: 'placeOrder (write)',
    gateway: {
      key: 'gateway:place-order',
      target: 'gateway',
      label: 'GraphQL placeOrder',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      rowOfItsOwn: true,
      query: placeOrderGateway,
      variables: () => ({ input: { petId: String(randomOrderPetId()), quantity: 1 } }),
    },
    postgraphile: {
      key: 'postgraphile:place-order',
      target: 'postgraphile',
      label: 'GraphQL benchPlaceOrder (SQL function)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: placeOrderPostGraphile,
      variables: () => ({ input: { petId: String(randomOrderPetId()), quantity: 1 } }),
    },
    note:
      'PostGraphile generates no placeOrder; its column is bench_place_order(), a PL/pgSQL function written for ' +
      'this benchmark with the gateway’s rules (lock pet, lock stock, check, insert, set status), exposed as a mutation ' +
      'the way PostGraphile serves custom writes',
  },
  {
    id: '6',
    title: 'updatePet: a rename (write)',
    gateway: {
      key: 'gateway:rename',
      target: 'gateway',
      label: 'GraphQL updatePet',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      query: renameGateway,
      variables: renameVariables,
      normalize: (body) => renamedRow(obj(data(body).updatePet)),
    },
    postgraphile: {
      key: 'postgraphile:rename',
      target: 'postgraphile',
      label: 'GraphQL updatePetByRowId (its CRUD mutation)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: renamePostGraphile,
      variables: renameVariables,
      normalize: (body) => renamedRow(obj(obj(data(body).updatePetByRowId).pet)),
    },
    note:
      'PostGraphile column: its generated updatePetByRowId, one UPDATE; the gateway’s updatePet also locks the pet ' +
      'and checks the new category and the status rule (update_pet(), one statement); where the new name lands among ' +
      'its category\'s pets is counted only for a gateway that reads it (response cache, Redis, live queries open), not this one',
  },
  {
    id: '7',
    title: 'updateInventory: a stock count (write)',
    gateway: {
      key: 'gateway:stock',
      target: 'gateway',
      label: 'GraphQL updateInventory',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      query: stockGateway,
      variables: stockVariables,
      normalize: (body) => stockRow(obj(data(body).updateInventory)),
    },
    postgraphile: {
      key: 'postgraphile:stock',
      target: 'postgraphile',
      label: 'GraphQL updateInventoryItemByPetId (its CRUD mutation)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: stockPostGraphile,
      variables: stockVariables,
      normalize: (body) => stockRow(obj(obj(data(body).updateInventoryItemByPetId).inventoryItem)),
    },
    note:
      'PostGraphile column: its generated updateInventoryItemByPetId, one UPDATE of the count; the gateway’s ' +
      'updateInventory also locks the pet, settles the entry’s and the pet’s status and creates a missing entry ' +
      '(set_stock(), one statement)',
  },
  {
    id: '7r',
    title: 'updateInventory refused: a stock count below 0 (bad input)',
    gateway: {
      key: 'gateway:stock-refused',
      target: 'gateway',
      label: 'GraphQL updateInventory, quantity -1 (VALIDATION_FAILED)',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      query: stockGateway,
      variables: refusedStockVariables,
      refused: '"VALIDATION_FAILED"',
    },
    postgraphile: {
      key: 'postgraphile:stock-refused',
      target: 'postgraphile',
      label: 'GraphQL updateInventoryItemByPetId, quantity -1 (its CHECK constraint)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: stockPostGraphile,
      variables: refusedStockVariables,
      // Its error as PostGraphile words it (in production it may mask the database's message).
      refused: '"errors"',
    },
    note:
      'PostGraphile column: its updateInventoryItemByPetId, an UPDATE the table’s CHECK (quantity >= 0) refuses; ' +
      'the gateway refuses the input before any statement',
  },
  closingOperation('8', 'completeOrder', 'completeOrder (write)'),
  closingOperation('9', 'cancelOrder', 'cancelOrder (write)'),
  {
    id: '10',
    title: 'createPet (write)',
    gateway: {
      key: 'gateway:create-pet',
      target: 'gateway',
      label: 'GraphQL createPet',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      rowOfItsOwn: true,
      query: createPetGateway,
      variables: () => ({ input: { name: newPetName(), categoryId: String(dataSet.categories) } }),
    },
    postgraphile: {
      key: 'postgraphile:create-pet',
      target: 'postgraphile',
      label: 'GraphQL createPet (its CRUD mutation)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: createPetPostGraphile,
      // updated_at has no default in the table (Prisma's @updatedAt sets it): PostGraphile's caller gives it.
      variables: () => ({ name: newPetName(), categoryId: String(dataSet.categories), now: new Date().toISOString() }),
    },
    note: 'PostGraphile column: its generated createPet, one INSERT; the gateway’s also validates the name and answers NOT_FOUND for a category that does not exist (one INSERT too)',
  },
  {
    id: '11',
    title: 'createCategory (write)',
    gateway: {
      key: 'gateway:create-category',
      target: 'gateway',
      label: 'GraphQL createCategory',
      kind: 'graphql',
      write: true,
      needsToken: true,
      randomized: true,
      rowOfItsOwn: true,
      query: createCategoryGateway,
      variables: () => ({ input: { name: newCategoryName(), description: 'Made by the bench' } }),
    },
    postgraphile: {
      key: 'postgraphile:create-category',
      target: 'postgraphile',
      label: 'GraphQL createCategory (its CRUD mutation)',
      kind: 'graphql',
      write: true,
      randomized: true,
      query: createCategoryPostGraphile,
      // updated_at has no default in the table (Prisma's @updatedAt sets it): PostGraphile's caller gives it.
      variables: () => ({ name: newCategoryName(), description: 'Made by the bench', now: new Date().toISOString() }),
    },
    note:
      'PostGraphile column: its generated createCategory, one INSERT; the gateway’s also validates the name and ' +
      'description and answers a taken name with CONFLICT (its unique index refuses it: one INSERT too)',
  },
  {
    id: '12',
    title: 'updateCategory: a rename (write)',
    gateway: pooledVariant('gateway', 'rename-category', 'GraphQL updateCategory', renameCategoryGateway, renamableCategories, (id) => ({
      id,
      name: `zz bench renamed ${++renamedCategories}`,
    })),
    postgraphile: pooledVariant(
      'postgraphile',
      'rename-category',
      'GraphQL updateCategoryByRowId (its CRUD mutation)',
      renameCategoryPostGraphile,
      renamableCategories,
      (id) => ({ id, name: `zz bench renamed ${++renamedCategories}` }),
    ),
    note:
      'PostGraphile column: its generated updateCategoryByRowId, one UPDATE of the name (updated_at left as it was); ' +
      'the gateway’s sets updated_at too and answers a taken name with CONFLICT and a missing category with NOT_FOUND ' +
      '(one UPDATE). Each side renames, at random, one of 1,000 categories of its own, made before its first cell',
  },
  {
    id: '13',
    title: 'deletePet (write)',
    gateway: pooledVariant('gateway', 'delete-pet', 'GraphQL deletePet', deletePetGateway, deletablePets, (id) => ({ id })),
    postgraphile: pooledVariant(
      'postgraphile',
      'delete-pet',
      'GraphQL deletePetByRowId (its CRUD mutation)',
      deletePetPostGraphile,
      deletablePets,
      (id) => ({ id }),
    ),
    note:
      'PostGraphile column: its generated deletePetByRowId, one DELETE (the foreign keys refuse a pet with orders, ' +
      'even finished ones, and take its inventory entry with it); the gateway’s delete_pet() locks the pet, counts ' +
      'its open orders (CONFLICT with the count), deletes its finished orders and the pet: one statement. Each ' +
      'request deletes a pet made for it before the cell (no orders, no stock entry, in a category of the pool’s own)',
  },
  {
    id: '14',
    title: 'deleteCategory (write)',
    gateway: pooledVariant('gateway', 'delete-category', 'GraphQL deleteCategory', deleteCategoryGateway, deletableCategories, (id) => ({ id })),
    postgraphile: pooledVariant(
      'postgraphile',
      'delete-category',
      'GraphQL deleteCategoryByRowId (its CRUD mutation)',
      deleteCategoryPostGraphile,
      deletableCategories,
      (id) => ({ id }),
    ),
    note:
      'PostGraphile column: its generated deleteCategoryByRowId, one DELETE (the foreign key refuses a category with ' +
      'pets, as an error); the gateway’s delete_category() locks the category, counts its pets (CONFLICT with the ' +
      'count) and deletes it: one statement. Each request deletes a category made for it before the cell',
  },
];

// 1f. the same 50 pets as 1, fetched as a federation router fetches entities: by their keys, through _entities
const ENTITY_PETS = 50;
const petEntitiesGateway = /* GraphQL */ `
  query BenchPetEntities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Pet { id name status category { id name } inventory { quantity status } }
    }
  }`;

/** Row 1's pets (the first 50 by id) by their keys, to the gateway serving as a subgraph. */
const petEntities: Operation = {
  id: '1f',
  title: '_entities for the same 50 pets + category + inventory',
  gateway: {
    key: 'gateway:pet-entities',
    target: 'gateway',
    label: 'GraphQL _entities (50 Pet representations), FEDERATION=true',
    kind: 'graphql',
    write: false,
    federation: true,
    query: petEntitiesGateway,
    variables: () => ({
      representations: Array.from({ length: ENTITY_PETS }, (_, index) => ({ __typename: 'Pet', id: String(index + 1) })),
    }),
    // In row 1's shape, so the same-data check holds it against PostGraphile's allPets(first: 50).
    normalize: (body) => [
      list(data(body)._entities).map((entity) => {
        const pet = obj(entity);
        return petRow(pet, obj(pet.category), pet.inventory ? obj(pet.inventory) : null);
      }),
      dataSet.pets > ENTITY_PETS,
    ],
  },
  postgraphile: baseOperations[0]!.postgraphile,
  note:
    'the gateway with FEDERATION=true, sent the _entities fetch a router (Hive Gateway, Apollo Router) makes for ' +
    'pets 1–50 with the selection of row 1; the PostGraphile column is the same cell as 1 (the same pets and data)',
};

export const operations: Operation[] = baseOperations.flatMap((operation) => {
  if (operation.id === '1') {
    return [
      operation,
      withResponseCache(operation, '1c'),
      withSharedCache(operation, '1r'),
      withUncachedCostEstimates(operation, '1d'),
      petEntities,
      withTraces(operation, '1t', 'sampled'),
      withTraces(operation, '1T', 'all'),
    ];
  }
  return operation.id === '2' ? [operation, withResponseCache(operation, '2c')] : [operation];
});

/** Reads as clients send them: no variant of the gateway's settings (cache, traces, federation, cost). */
export const plainReads = operations.filter(
  ({ gateway: g }) => !g.write && !g.responseCache && !g.sharedCache && !g.federation && !g.uncachedCost && !g.traces,
);
