import { GraphQLError } from 'graphql';
import pg from 'pg';
import { Prisma } from './generated/prisma/client.js';

/**
 * The one list of error codes, each with its HTTP status. GraphQL errors carry
 * `extensions: { code, status }` and REST answers the spec's Error body
 * `{ code, message, status }`: the same pair for the same failure.
 */
export const errorStatus = {
  VALIDATION_FAILED: 400,
  COST_LIMIT_EXCEEDED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_SUPPORTED: 400,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  INSUFFICIENT_STOCK: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  THROTTLED: 429,
  INTERNAL: 500,
  TIMEOUT: 503,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * Makes errors with no stack trace: for those whose stack nobody reads. Capturing one walks the
 * stack, and graphql-js formats it again for every GraphQLError that wraps the error: most of what
 * refusing a request cost (docs/performance.md, "Errors").
 */
export function withoutStackTrace<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * A failure the caller can act on; its message is safe to show. A refusal (4xx) carries no stack:
 * it is answered and counted, never logged with one; a 5xx keeps its stack for the log.
 */
export class DomainError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The input field at fault, for VALIDATION_FAILED. */
    readonly field?: string,
    /** For 503s and 429s: when to try again (the Retry-After header). */
    readonly retryAfterSeconds?: number,
    /** More for a GraphQL client to read in the error's `extensions` (a cost refusal's numbers). */
    readonly extensions?: Readonly<Record<string, unknown>>,
  ) {
    const limit = Error.stackTraceLimit;
    if (errorStatus[code] < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'DomainError';
    this.status = errorStatus[code];
  }
}

/** Retry-After of an answer that the database could not give (UNAVAILABLE). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const databaseUnavailable = () =>
  new DomainError(
    'UNAVAILABLE',
    'The database cannot be reached right now; nothing was changed unless a write had committed. Try again shortly.',
    undefined,
    DATABASE_RETRY_AFTER_SECONDS,
  );

export const validationFailed = (field: string, message: string) =>
  new DomainError('VALIDATION_FAILED', message, field);
export const notFound = (message: string) => new DomainError('NOT_FOUND', message);
export const conflict = (message: string) => new DomainError('CONFLICT', message);

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  /** The request's id, also in the X-Request-Id header and the log: quote it when reporting a problem. */
  requestId?: string;
  /** The request's trace (W3C trace id) when traces are sent: it leads from a support ticket to the trace. */
  traceId?: string;
}

const INTERNAL_MESSAGE = 'Something went wrong on our side. Quote the request id when reporting it.';

/**
 * What a client may see of any thrown value: a DomainError as it is, a
 * Prisma error we recognise as the DomainError it means, anything else as a
 * masked INTERNAL error (the original is for the log, never the client).
 */
export function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  const sqlState = postgresCode(error);
  if (sqlState === QUERY_CANCELED) {
    return new DomainError('TIMEOUT', 'The database took too long to answer and the statement was stopped; try again.');
  }
  if (sqlState !== undefined && UNSTORABLE_TEXT.has(sqlState)) {
    // Text no validator saw (a search term, say) that PostgreSQL cannot hold: U+0000 above all.
    return new DomainError('VALIDATION_FAILED', 'A text value holds a character the database cannot take (such as U+0000).');
  }
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    switch (error.code) {
      case 'P2002':
        return conflict('A record with that value already exists.');
      case 'P2003':
        return conflict('That record is still referred to by others.');
      case 'P2025':
        return notFound('The record does not exist.');
      // A transaction that could not start in time (the pool was busy) or ran past its time limit.
      case 'P2028':
        return new DomainError('TIMEOUT', 'The database took too long to answer and the change was undone; try again.');
    }
  }
  return undefined;
}

/**
 * Prisma's codes for a database it cannot reach or that closed the connection
 * (P1001, P1002, P1008, P1017), or whose pool gave no connection in time (P2024).
 */
const UNREACHABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** The pg adapter's kinds for a socket that failed. */
const UNREACHABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TlsConnectionError']);
/** pg and pg-pool's own words for a connection lost, refused or not had in time, and the pool refusing to queue. */
const UNREACHABLE_MESSAGE =
  /Query read timeout|timeout exceeded when trying to connect|Connection terminated|connection timeout|ECONNREFUSED|ECONNRESET|EPIPE|Client has encountered a connection error|Can't reach database|requests already wait for a database connection/;

/**
 * Whether `error` means the database is unavailable (unreachable, gone
 * silent, restarting, or too busy to take another request), rather than a
 * fault of the request: SQLSTATE class 08 (connection exception), 57P01-57P03
 * (shutting down, starting up), Prisma's connection codes, the pg adapter's
 * socket kinds, pg's timeouts, the pool refusing to queue.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== 'object') return false;
    const sqlState = postgresCode(current);
    if (sqlState && (sqlState.startsWith('08') || ['57P01', '57P02', '57P03'].includes(sqlState))) return true;
    const { code, message, name, meta, cause } = current as {
      code?: unknown;
      message?: unknown;
      name?: unknown;
      meta?: { driverAdapterError?: { cause?: { kind?: unknown } } };
      cause?: unknown;
    };
    if (name === 'DatabaseOverloadedError') return true;
    if (typeof code === 'string' && UNREACHABLE_PRISMA_CODES.has(code)) return true;
    const adapterKind = meta?.driverAdapterError?.cause?.kind ?? (cause as { kind?: unknown } | undefined)?.kind;
    if (typeof adapterKind === 'string' && UNREACHABLE_ADAPTER_KINDS.has(adapterKind)) return true;
    if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return true;
    current = cause;
  }
  return false;
}

/** SQLSTATE 57014: PostgreSQL cancelled the statement, here because it ran past statement_timeout. */
const QUERY_CANCELED = '57014';
/** SQLSTATE 22021 (character_not_in_repertoire) and 22P05 (untranslatable_character). */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** A write refused by a foreign key: the row it refers to does not exist (SQLSTATE 23503, Prisma's P2003). */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') || postgresCode(error) === '23503';
}

/** A write refused by a unique index: the value is taken by another row (SQLSTATE 23505, Prisma's P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') || postgresCode(error) === '23505';
}

/**
 * The SQLSTATE of a PostgreSQL error as it arrives through Prisma's pg
 * driver adapter: wrapped in a PrismaClientKnownRequestError whose
 * `meta.driverAdapterError.cause` holds it, or as the adapter's own error;
 * or from pg itself, for the gateway's own statements (src/database/find-many.ts).
 */
export function postgresCode(error: unknown): string | undefined {
  const cause = (value: unknown) => {
    if (typeof value !== 'object' || value === null) return undefined;
    const { kind, originalCode, code } = value as { kind?: unknown; originalCode?: unknown; code?: unknown };
    if (kind !== 'postgres') return undefined;
    if (typeof originalCode === 'string') return originalCode;
    return typeof code === 'string' ? code : undefined;
  };
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    const adapterError = (error.meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError;
    return cause(adapterError?.cause);
  }
  if (error instanceof Error && error.name === 'DriverAdapterError') return cause(error.cause);
  if (error instanceof pg.DatabaseError) return error.code;
  return undefined;
}

/** The ids an error answer carries, for a problem report to lead to the request's log lines and trace. */
export interface AnswerIds {
  requestId?: string;
  traceId?: string;
}

/** The Error body of any thrown value (see toDomainError), with the request's ids when there are some. */
export function errorBody(error: unknown, ids: AnswerIds = {}): ErrorBody {
  const known = toDomainError(error);
  const body: ErrorBody = known
    ? { code: known.code, message: known.message, status: known.status }
    : { code: 'INTERNAL', message: INTERNAL_MESSAGE, status: 500 };
  return { ...body, ...presentIds(ids) };
}

/** The ids that are set, for an Error body or GraphQL `extensions`. */
export function presentIds({ requestId, traceId }: AnswerIds): AnswerIds {
  return { ...(requestId ? { requestId } : {}), ...(traceId ? { traceId } : {}) };
}

/** A DomainError as the GraphQL error a client receives. */
export function toGraphQLError(error: DomainError, path?: ReadonlyArray<string | number>): GraphQLError {
  return new GraphQLError(error.message, {
    path,
    extensions: { ...error.extensions, code: error.code, status: error.status, ...(error.field ? { field: error.field } : {}) },
  });
}

export const maskedInternalError = (path?: ReadonlyArray<string | number>) =>
  new GraphQLError(INTERNAL_MESSAGE, { path, extensions: { code: 'INTERNAL', status: 500 } });

/**
 * The body of a request refused before GraphQL or REST ran (or that yoga
 * refused with no body): the spec's Error object with the request id. Sent to
 * /graphql it also carries a GraphQL `errors` list and the request id in the
 * response's `extensions`, so GraphQL clients read it as any other GraphQL error.
 */
export function refusalBody(error: DomainError, ids: AnswerIds, graphql: boolean) {
  const body = errorBody(error, ids);
  if (!graphql) return body;
  const extensions = presentIds(ids);
  return {
    ...body,
    errors: [{ message: body.message, extensions: { code: body.code, status: body.status } }],
    ...(extensions.requestId || extensions.traceId ? { extensions } : {}),
  };
}
