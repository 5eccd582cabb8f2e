import { createHash } from 'node:crypto';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { metricsClient, requireScope, scopes } from '../../auth/scopes.js';
import type { PrismaClient } from '../../database/client.js';
import type { ReadRouting } from '../../database/replicas.js';
import { parseId } from '../../domain/ids.js';
import type { Lookups } from '../../domain/lookups.js';
import { findPetOrThrow, listOrders } from '../../domain/queries.js';
import { DomainError, validationFailed } from '../../errors.js';
import type { Order, Pet } from '../../generated/prisma/client.js';
import { LEGACY_ROUTE, type LegacyPolicy } from '../../legacy.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { OutageLog } from '../../observability/outages.js';
import { type CostBudget, throttled } from '../demand/budget.js';
import { isoTime } from '../iso-time.js';
import { errorAnswer, refusal } from '../refusal.js';
import { OPENAPI_PATH } from '../routes.js';
import type { GatewayEnv } from '../types.js';
import { openApiDocument } from './openapi.js';

/**
 * The REST compatibility routes for legacy callers of the Petstore API, as
 * described by ./openapi.ts. Handlers parse, call the domain, and write the
 * spec's JSON; every failure is the spec's Error body.
 */

export interface RestOptions {
  prisma: PrismaClient;
  /** Reads on replicas (DATABASE_REPLICA_URLS); on the primary when absent. */
  readRouting?: ReadRouting;
  /** Single-row reads gathered across concurrent requests. */
  lookups: Lookups;
  logger: Logger;
  metrics: Metrics;
  legacy: LegacyPolicy;
  databaseOutage?: Pick<OutageLog, 'failed'>;
  /** Each client's cost budget, which GraphQL spends too. */
  budget?: CostBudget;
}

type RestEnv = GatewayEnv;

/**
 * What each route costs of the client's budget, as its GraphQL counterpart would: a pet by id is
 * one object (`pet(id:)`), a page of orders the default page of 20 (`orders { nodes }`).
 */
export const ROUTE_COSTS = { pet: 1, orders: 20 } as const;

const ALLOWED_METHODS = 'GET, HEAD';

export function createRestRouter(options: RestOptions) {
  const router = new Hono<RestEnv>();
  const { legacy } = options;
  const openApiJson = JSON.stringify(openApiDocument(legacy));
  // Every route here reads: on a replica that has replayed the caller's Read-After, else the primary.
  const reader = (c: Context<RestEnv>) => options.readRouting?.reader(c.get('readAfter')).prisma ?? options.prisma;

  // Every answer of the legacy route says it is deprecated, and every use of it is counted per client.
  const legacyNotice: MiddlewareHandler<RestEnv> = async (c, next) => {
    for (const [name, value] of Object.entries(legacy.headers)) c.header(name, value);
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      options.metrics.deprecatedUse.inc({ target: LEGACY_ROUTE, client: metricsClient(c.get('principal')) });
    }
    await next();
  };

  // The route's declared cost, taken before it runs; THROTTLED (429, Retry-After) when the budget does not hold it.
  const costs =
    (points: number): MiddlewareHandler<RestEnv> =>
    async (c, next) => {
      const note = c.get('demand');
      if (!options.budget || !note) return next();
      const taken = await options.budget.take(note.client, points);
      note.budget = taken;
      if (!taken.taken) return refusal(c, throttled(taken, points, options.budget.settings));
      return next();
    };

  router.use('/pets/:petId', legacyNotice);
  router.get('/pets/:petId', requireJson, costs(ROUTE_COSTS.pet), async (c) => {
    legacy.refuseWhenRetired(LEGACY_ROUTE, {
      client: metricsClient(c.get('principal')),
      requestId: c.get('requestId'),
    });
    const pet = await findPetOrThrow(reader(c), parseId(c.req.param('petId'), 'petId'), options.lookups);
    return jsonAnswer(c, petJson(pet));
  });
  router.all('/pets/:petId', methodNotAllowed);

  router.get('/store/orders', requireJson, costs(ROUTE_COSTS.orders), async (c) => {
    requireScope(c.get('principal'), scopes.readOrders);
    const complete = parseBoolean('complete', singleQueryValue(c, 'complete'));
    const petIdText = singleQueryValue(c, 'petId');
    const petId = petIdText === undefined ? undefined : parseId(petIdText, 'petId');
    const page = await listOrders(reader(c), {
      complete,
      petId,
      limit: parseWholeNumber(singleQueryValue(c, 'limit')),
      offset: parseWholeNumber(singleQueryValue(c, 'offset')),
    });
    if (page.hasMore) {
      const next = new URLSearchParams();
      if (complete !== undefined) next.set('complete', String(complete));
      if (petId !== undefined) next.set('petId', petId.toString());
      next.set('limit', String(page.limit));
      next.set('offset', String(page.offset + page.limit));
      c.header('Link', `</store/orders?${next}>; rel="next"`);
    }
    return jsonAnswer(c, `[${page.orders.map(orderJson).join(',')}]`);
  });
  router.all('/store/orders', methodNotAllowed);

  router.get(OPENAPI_PATH, requireJson, (c) => jsonAnswer(c, openApiJson));
  router.all(OPENAPI_PATH, methodNotAllowed);

  router.onError((error, c) => {
    // RFC 9110 §15.5.2: a 401 names how to authenticate (here: no token was sent; a bad one is refused earlier).
    if (error instanceof DomainError && error.code === 'UNAUTHENTICATED') c.header('WWW-Authenticate', 'Bearer');
    return errorAnswer(c, error, options);
  });

  return router;
}

const methodNotAllowed = (c: Context<RestEnv>): never => {
  c.header('Allow', ALLOWED_METHODS);
  throw new DomainError(
    'METHOD_NOT_ALLOWED',
    `${c.req.method} is not allowed on ${c.req.path}; it answers ${ALLOWED_METHODS}.`,
  );
};

const requireJson: MiddlewareHandler<RestEnv> = async (c, next) => {
  // The answer differs by Accept (JSON or 406), so caches must key on it.
  c.header('Vary', 'Accept');
  if (!acceptsJson(c.req.header('accept'))) {
    throw new DomainError(
      'NOT_ACCEPTABLE',
      'These routes answer application/json only; the Accept header allows none.',
    );
  }
  await next();
};

/**
 * Whether an Accept header allows application/json: the most specific media
 * range that matches decides, and q=0 means "not this" (RFC 9110 §12.5.1).
 */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  let specificity = -1;
  let weight = 0;
  for (const range of accept.split(',')) {
    const [mediaType = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const rank = ['*/*', 'application/*', 'application/json'].indexOf(mediaType);
    if (rank < specificity || rank === -1) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const rangeWeight = q === undefined ? 1 : Number(q.slice(2));
    weight = rank > specificity ? rangeWeight : Math.max(weight, rangeWeight);
    specificity = rank;
  }
  return weight > 0;
}

/** The answer as JSON text with its ETag, or 304 when the caller's If-None-Match already has it. */
function jsonAnswer(c: Context<RestEnv>, json: string) {
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`;
  c.header('ETag', etag);
  if (ifNoneMatchHas(c.req.header('if-none-match'), etag)) return c.body(null, 304);
  // Set here so that HEAD, which sends no body, still tells the length GET would send.
  c.header('Content-Length', String(Buffer.byteLength(json)));
  return c.body(json, 200, { 'Content-Type': 'application/json' });
}

/** RFC 9110 §13.1.2: weak comparison, so W/"x" matches "x"; `*` matches any current answer. */
function ifNoneMatchHas(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** A query parameter given at most once; an empty value counts as not given. */
function singleQueryValue(c: Context<RestEnv>, name: string): string | undefined {
  const values = c.req.queries(name) ?? [];
  if (values.length > 1) throw validationFailed(name, `${name} may be given only once, got ${values.length} values.`);
  return values[0] === '' ? undefined : values[0];
}

function parseBoolean(name: string, text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw validationFailed(name, `${name} must be true or false, got "${text.slice(0, 40)}".`);
}

/** Digits become a number; anything else becomes NaN, which the domain refuses naming the parameter. */
function parseWholeNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return /^-?\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
}

/*
 * JSON text in the spec's shape, written field by field: int64 ids digit for digit (a JSON number
 * above 2^53 must not pass through a lossy Number), dates as ISO 8601 in UTC, and a field without a
 * value left out rather than null. By hand rather than through a generic object walk: the orders page
 * spent 11% of its time in that walk (a profile at c = 10).
 */
const petJson = (pet: Pet) =>
  `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId},"status":${JSON.stringify(pet.status)}}`;

function orderJson(order: Order): string {
  const shipDate = order.shipDate ? `,"shipDate":"${isoTime(order.shipDate)}"` : '';
  return `{"id":${order.id},"petId":${order.petId},"quantity":${order.quantity}${shipDate},"complete":${order.complete}}`;
}
