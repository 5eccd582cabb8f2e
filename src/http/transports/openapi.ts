import release from '../../../contract/release.json' with { type: 'json' };
import { scopes } from '../../auth/scopes.js';
import type { StabilityLevel } from '../../builder.js';
import { orderListPaging } from '../../domain/queries.js';
import { limits } from '../../domain/validation.js';
import { type ErrorCode, errorStatus } from '../../errors.js';
import type { LegacyPolicy } from '../../legacy.js';
import { REQUEST_ID_PATTERN } from '../request.js';
import { GRAPHQL_PATH } from '../routes.js';

/**
 * The OpenAPI 3.0.3 description of the REST compatibility routes, served at
 * GET /openapi.json. It describes exactly what ./rest.ts answers; the tests
 * check every REST response they receive against it. Its GET /pets/{petId}
 * states the sunset policy, so `Link: rel="sunset"` points here (the docs are
 * not served and the project has no public address yet).
 */

const LEGACY_DOCS_SECTION = 'docs/api.md, section "Legacy REST callers"';

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

const int64 = { type: 'integer', format: 'int64', minimum: 1 } as const;

const jsonContent = (schema: object) => ({ 'application/json': { schema } });

const requestIdHeader = { 'X-Request-Id': ref('headers', 'X-Request-Id') };
const rateLimitHeaders = {
  RateLimit: ref('headers', 'RateLimit'),
  'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
};

/**
 * The Error responses of the document, each declaring the codes it answers
 * with (all of the status it is listed under), named at the end of its
 * description: "(code X)" or "(code X or Y)". The Error schema's code enum is
 * made of exactly the codes declared here, so it lists what the REST routes
 * can answer and nothing GraphQL alone answers.
 */
function errorResponses() {
  const declared = new Set<ErrorCode>();
  /** An Error response; `extraHeaders` are the ones the route adds to every answer. */
  const errorResponse = (codes: readonly [ErrorCode, ...ErrorCode[]], description: string, extraHeaders: object = {}) => {
    for (const code of codes) declared.add(code);
    return {
      description: `${description} (code ${codes.join(' or ')}).`,
      headers: { ...requestIdHeader, ...extraHeaders },
      content: jsonContent(ref('schemas', 'Error')),
    };
  };
  return {
    errorResponse,
    /** Every code declared so far, in the order of the one list (errorStatus). */
    declaredCodes: () => (Object.keys(errorStatus) as ErrorCode[]).filter((code) => declared.has(code)),
  };
}

type ErrorResponse = ReturnType<typeof errorResponses>['errorResponse'];

const DECLARED_CODES = /\(code ([A-Z_]+(?: or [A-Z_]+)*)\)\.$/;

/** The codes an Error response's description declares (see errorResponses); none for any other response. */
export function declaredErrorCodes(description: string): string[] {
  return DECLARED_CODES.exec(description)?.[1]?.split(' or ') ?? [];
}

/**
 * The answers every route may give before it runs or whatever it does: an
 * invalid token (401), a body over the limit (413; these routes take none),
 * a client over its rate limit (429), a time limit run out or a service
 * that cannot be reached (503).
 */
const guardResponses = (errorResponse: ErrorResponse) => ({
  '401': {
    ...errorResponse(
      ['UNAUTHENTICATED'],
      'No bearer token where one is needed, or an Authorization header that is not a valid bearer token: ' +
        'malformed, forged, expired, or without a subject. A token that is present is never ignored',
    ),
    headers: { ...requestIdHeader, 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') },
  },
  '413': errorResponse(['PAYLOAD_TOO_LARGE'], 'A request body over the size limit; these routes take none'),
  '429': {
    ...errorResponse(['RATE_LIMITED', 'THROTTLED'], 'Too many requests from this client (RATE_LIMITED), or its cost budget does not hold this route\'s cost (THROTTLED)'),
    headers: {
      ...requestIdHeader,
      'Retry-After': ref('headers', 'Retry-After'),
      ...rateLimitHeaders,
    },
  },
  '503': errorResponse(
    ['TIMEOUT', 'UNAVAILABLE'],
    'The request or one of its database statements ran past its time limit (TIMEOUT), or the database or the ' +
      "identity provider's keys could not be reached (UNAVAILABLE). Try again",
  ),
});
const legacyHeaders = {
  Deprecation: ref('headers', 'Deprecation'),
  Sunset: ref('headers', 'Sunset'),
  Link: ref('headers', 'LegacyLink'),
};

/** HEAD answers the same status and headers as GET, without the body. */
function headOf<Operation extends { responses: Record<string, { description: string; headers?: object }> }>(
  operation: Operation,
) {
  const responses = Object.fromEntries(
    Object.entries(operation.responses).map(([status, response]) => [
      status,
      { description: response.description, ...(response.headers ? { headers: response.headers } : {}) },
    ]),
  );
  return { ...operation, responses };
}

/**
 * REST operations not yet stable, by operationId, with the same levels as the
 * GraphQL schema's @stability: none today (both routes are the original API's).
 */
const unstableOperations: Readonly<Record<string, StabilityLevel>> = {};

/**
 * An operation marked as the GraphQL schema marks one that is not stable: an
 * `x-stability` of `experimental` or `beta`, and the same word leading its
 * description. The contract check lets breaking changes to it through.
 */
export function withStability<Operation extends { description: string }>(operation: Operation, level: StabilityLevel | undefined) {
  if (level === undefined) return operation;
  return { ...operation, 'x-stability': level.toLowerCase(), description: `${level}: ${operation.description}` };
}

export function openApiDocument(legacy: LegacyPolicy, version: string = release.openapi.version) {
  const { sunsetDate: legacySunsetDate, sunsetAt } = legacy;
  const { errorResponse, declaredCodes } = errorResponses();
  const afterSunset =
    legacy.afterSunset === 'gone'
      ? 'From that date on it answers 410 with an Error body (code GONE).'
      : 'This gateway is set to keep answering after that date (LEGACY_AFTER_SUNSET=serve), with the same headers.';
  const brownouts =
    legacy.brownouts.length === 0
      ? []
      : [
          'Before that date it answers the same 410 during scheduled brownouts (UTC):',
          `${legacy.brownouts.map((window) => `${window.start.toISOString()} to ${window.end.toISOString()}`).join(', ')}.`,
        ];

  const getPetById = withStability({
    tags: ['Pets'],
    operationId: 'getPetById',
    summary: 'Find a pet by its id (deprecated)',
    description: [
      `Deprecated. Sunset date: ${legacySunsetDate} (${sunsetAt.toUTCString()}). ${afterSunset}`,
      ...brownouts,
      `Use the GraphQL query \`pet(id:)\` at ${GRAPHQL_PATH} instead:`,
      '`query { pet(id: "1") { id name categoryId status } }`.',
      'Every answer of this route carries `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link` headers naming',
      `the successor (rel="successor-version") and this policy (rel="sunset"); see also ${LEGACY_DOCS_SECTION}.`,
    ].join(' '),
    deprecated: true,
    'x-sunset': legacySunsetDate,
    responses: {
      '200': {
        description: 'The pet.',
        headers: { ...requestIdHeader, ...legacyHeaders, ETag: ref('headers', 'ETag') },
        content: jsonContent(ref('schemas', 'Pet')),
      },
      '304': {
        description: 'The pet is unchanged since the ETag given in If-None-Match.',
        headers: { ...requestIdHeader, ...legacyHeaders, ETag: ref('headers', 'ETag') },
      },
      '400': errorResponse(['VALIDATION_FAILED'], 'petId is not an int64 id from 1 to 2^63-1', legacyHeaders),
      '404': errorResponse(['NOT_FOUND'], 'No pet has this id', legacyHeaders),
      '406': errorResponse(['NOT_ACCEPTABLE'], 'The Accept header allows no JSON', legacyHeaders),
      '410': errorResponse(['GONE'], 'The route is past its sunset date, or in a scheduled brownout before it', legacyHeaders),
      '500': errorResponse(['INTERNAL'], 'Something unexpected failed; the message is masked', legacyHeaders),
      // Given before the route runs, so without its deprecation headers.
      ...guardResponses(errorResponse),
    },
    // Public: no token needed, but one that is sent must be valid.
    security: [{}, { bearerAuth: [] }],
  }, unstableOperations.getPetById);

  const listOrders = withStability({
    tags: ['Store'],
    operationId: 'listOrders',
    summary: 'List the orders of the store',
    description: [
      `Orders by id, ${orderListPaging.defaultLimit} to a page unless \`limit\` says otherwise.`,
      'While more orders remain, a `Link` header with rel="next" gives the address of the next page.',
      'A field without a value (an order not yet shipped has no `shipDate`) is left out, never null.',
      `The GraphQL query that replaces it, at ${GRAPHQL_PATH}:`,
      `Needs a bearer token with the scope \`${scopes.readOrders}\`: without one it answers 401, with a token`,
      'lacking the scope 403.',
      '`query { orders(first: 50, filter: { petId: "1", complete: false }) {',
      'edges { node { id petId quantity shipDate complete } } pageInfo { hasNextPage endCursor } } }`.',
    ].join(' '),
    parameters: [
      ref('parameters', 'complete'),
      ref('parameters', 'petIdFilter'),
      ref('parameters', 'limit'),
      ref('parameters', 'offset'),
    ],
    responses: {
      '200': {
        description: 'One page of orders.',
        headers: { ...requestIdHeader, ETag: ref('headers', 'ETag'), Link: ref('headers', 'NextLink') },
        content: jsonContent({ type: 'array', items: ref('schemas', 'Order') }),
      },
      '304': {
        description: 'The page is unchanged since the ETag given in If-None-Match.',
        headers: { ...requestIdHeader, ETag: ref('headers', 'ETag'), Link: ref('headers', 'NextLink') },
      },
      '400': errorResponse(['VALIDATION_FAILED'], 'A parameter is not valid; the message names it'),
      '406': errorResponse(['NOT_ACCEPTABLE'], 'The Accept header allows no JSON'),
      '500': errorResponse(['INTERNAL'], 'Something unexpected failed; the message is masked'),
      ...guardResponses(errorResponse),
      '403': errorResponse(['FORBIDDEN'], `The token lacks the scope ${scopes.readOrders}`),
    },
    security: [{ bearerAuth: [] }],
    'x-required-scopes': [scopes.readOrders],
  }, unstableOperations.listOrders);

  const responses = {
    NotFound: errorResponse(['NOT_FOUND'], 'No such path'),
    MethodNotAllowed: {
      ...errorResponse(['METHOD_NOT_ALLOWED'], 'The path does not answer this method'),
      headers: { ...requestIdHeader, Allow: ref('headers', 'Allow') },
    },
  };

  return {
    openapi: '3.0.3',
    info: {
      title: 'Petstore',
      // The REST routes' own version line: the last release of this document (contract/, `npm run contract:release`).
      version,
      description: [
        `The REST routes kept for legacy callers of the Petstore API. The full API is GraphQL, at ${GRAPHQL_PATH}.`,
        'Every answer is JSON; every error is an Error object whose code and status are the ones GraphQL errors',
        'carry in `extensions`. Another method on these paths answers 405 with an `Allow` header; an unknown path',
        'answers 404. Every answer carries the `X-Request-Id` header (the one given, or a new one), and every',
        'Error body the same id as `requestId`. Every answer that passed the rate limit carries the `RateLimit`',
        'and `RateLimit-Policy` headers. An operation that is not yet stable says so with `x-stability`',
        '(`experimental`: may change or go away without notice; `beta`: complete, but its shape may still change),',
        'as the GraphQL schema does with `@stability`; every other operation is stable, and changes to it follow',
        'the compatibility policy: nothing a caller relies on is removed or changed before a deprecation with a',
        'sunset date (`deprecated`, `x-sunset`) has run out.',
      ].join(' '),
      contact: { name: 'The operators of this gateway' },
    },
    // Relative: the routes are at the root of the host that serves this document.
    servers: [{ url: '/', description: 'The gateway serving this document.' }],
    tags: [
      { name: 'Pets', description: 'Animals in the store.' },
      { name: 'Store', description: 'Orders for animals in the store.' },
    ],
    // OpenAPI 3.0 has no place for the answers of paths and methods it does not list; these name them.
    'x-unlisted-requests': {
      description: 'What a request for a path or a method this document does not list is answered.',
      unknownPath: ref('responses', 'NotFound'),
      unknownMethod: ref('responses', 'MethodNotAllowed'),
    },
    paths: {
      '/pets/{petId}': {
        parameters: [ref('parameters', 'petId')],
        get: getPetById,
        head: headOf({ ...getPetById, operationId: 'headPetById', summary: 'Headers of GET /pets/{petId}' }),
      },
      '/store/orders': {
        get: listOrders,
        head: headOf({ ...listOrders, operationId: 'headOrders', summary: 'Headers of GET /store/orders' }),
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: [
            'A JWT in `Authorization: Bearer <token>`, signed with the gateway\'s HS256 key or by the identity',
            'provider named by AUTH_JWKS_URL. Its `scope` claim (space-separated) or `scp` array holds the scopes:',
            `${Object.values(scopes).join(', ')}. In development, \`npm run token -- --scope ${scopes.readOrders}\``,
            'mints one.',
          ].join(' '),
        },
      },
      schemas: {
        PetStatus: {
          type: 'string',
          description: 'Status of a pet and of an inventory entry.',
          enum: ['available', 'pending', 'sold'],
        },
        Pet: {
          type: 'object',
          description: 'An animal in the store.',
          required: ['id', 'name', 'categoryId'],
          properties: {
            id: { ...int64, description: 'Unique identifier assigned on creation (exact, even above 2^53).' },
            name: {
              type: 'string',
              minLength: limits.nameLength.min,
              maxLength: limits.nameLength.max,
              description: "The animal's name.",
            },
            categoryId: { ...int64, description: 'The ID of the category the animal belongs to.' },
            status: ref('schemas', 'PetStatus'),
          },
        },
        Order: {
          type: 'object',
          description: 'An order for a pet. No field is required; a field without a value is left out.',
          properties: {
            id: { ...int64, description: 'Unique order identifier.' },
            petId: { ...int64, description: 'The ID of the animal in this order.' },
            quantity: {
              type: 'integer',
              format: 'int32',
              minimum: limits.orderQuantity.min,
              maximum: limits.orderQuantity.max,
              description: 'Number of units ordered.',
            },
            shipDate: { type: 'string', format: 'date-time', description: 'Expected or actual ship date, UTC.' },
            complete: { type: 'boolean', description: 'Whether the order has been fulfilled.' },
          },
        },
        Error: {
          type: 'object',
          description: 'Every error answer.',
          required: ['code', 'message', 'status'],
          properties: {
            // Declared by the responses above, every one of them built by now.
            code: { type: 'string', enum: declaredCodes(), description: 'A machine-readable error code.' },
            message: { type: 'string', description: 'A human-readable description of the error.' },
            status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status code.' },
            requestId: {
              type: 'string',
              pattern: REQUEST_ID_PATTERN,
              description: 'The id of the request, as in the X-Request-Id header and the log; quote it when reporting.',
            },
            traceId: {
              type: 'string',
              pattern: '^[0-9a-f]{32}$',
              description: 'The W3C trace id of the request, when the gateway sends traces; quote it beside the request id.',
            },
          },
        },
      },
      parameters: {
        petId: {
          name: 'petId',
          in: 'path',
          required: true,
          description: 'The pet identifier: a whole number from 1 to 2^63-1.',
          schema: int64,
        },
        petIdFilter: {
          name: 'petId',
          in: 'query',
          required: false,
          description: 'Only orders for this pet.',
          schema: int64,
        },
        complete: {
          name: 'complete',
          in: 'query',
          required: false,
          description: 'Only complete (true) or only open (false) orders.',
          schema: { type: 'boolean' },
        },
        limit: {
          name: 'limit',
          in: 'query',
          required: false,
          description: 'How many orders to a page.',
          schema: {
            type: 'integer',
            format: 'int32',
            minimum: 1,
            maximum: orderListPaging.maxLimit,
            default: orderListPaging.defaultLimit,
          },
        },
        offset: {
          name: 'offset',
          in: 'query',
          required: false,
          description: 'How many orders to skip.',
          schema: { type: 'integer', format: 'int32', minimum: 0, maximum: orderListPaging.maxOffset, default: 0 },
        },
      },
      headers: {
        'X-Request-Id': {
          description: 'The request id given by the caller, or a new one; quote it when reporting a problem.',
          required: true,
          schema: { type: 'string', pattern: REQUEST_ID_PATTERN },
        },
        Deprecation: {
          description: 'RFC 9745: when the route was deprecated, as @<unix seconds>.',
          required: true,
          schema: { type: 'string', pattern: '^@[0-9]+$' },
        },
        Sunset: {
          description: 'RFC 8594: when the route goes away, as an HTTP-date.',
          required: true,
          schema: {
            type: 'string',
            pattern: '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$',
            example: sunsetAt.toUTCString(),
          },
        },
        LegacyLink: {
          description: `The successor (rel="successor-version", ${GRAPHQL_PATH}) and the sunset policy (rel="sunset").`,
          required: true,
          schema: { type: 'string', pattern: 'rel="successor-version".*rel="sunset"' },
        },
        NextLink: {
          description: 'The next page (rel="next"), present while more orders remain.',
          required: false,
          schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' },
        },
        ETag: {
          description: 'The version of this answer; send it in If-None-Match to get 304 while it is unchanged.',
          required: true,
          schema: { type: 'string', pattern: '^"[^"]*"$' },
        },
        'WWW-Authenticate': {
          description:
            'RFC 6750: `Bearer` when no token was sent, `Bearer error="invalid_token"` when the one sent was refused.',
          required: true,
          schema: { type: 'string', pattern: '^Bearer( error="invalid_token")?$' },
        },
        'Retry-After': {
          description: 'Seconds to wait before the next request counts again.',
          required: true,
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        RateLimit: {
          description:
            'The IETF RateLimit header (draft-ietf-httpapi-ratelimit-headers), per policy: `r` what remains, `t` seconds until it is whole again.',
          required: true,
          schema: { type: 'string', pattern: '^"requests";r=[0-9]+;t=[0-9]+(, "cost";r=[0-9]+;t=[0-9]+)?$' },
        },
        'RateLimit-Policy': {
          description:
            'The IETF RateLimit-Policy header: `requests` per window of `w` seconds, and the `cost` budget of `q` points, refilled from empty in `w` seconds.',
          required: true,
          schema: { type: 'string', pattern: '^"requests";q=[0-9]+;w=[0-9]+(, "cost";q=[0-9]+;w=[0-9]+)?$' },
        },
        Allow: {
          description: 'The methods the path answers.',
          required: true,
          schema: { type: 'string', enum: ['GET, HEAD'] },
        },
      },
      responses,
    },
  };
}
