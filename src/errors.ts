import { GraphQLError } from 'graphql';
import { Prisma } from './generated/prisma/client.js';

/**
 * The one list of error codes, each with its HTTP status. GraphQL errors carry
 * `extensions: { code, status }` and REST answers the spec's Error body
 * `{ code, message, status }`: the same pair for the same failure.
 */
export const errorStatus = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  INSUFFICIENT_STOCK: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  TIMEOUT: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** A failure the caller can act on; its message is safe to show. */
export class DomainError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The input field at fault, for VALIDATION_FAILED. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = errorStatus[code];
  }
}

export const validationFailed = (field: string, message: string) =>
  new DomainError('VALIDATION_FAILED', message, field);
export const notFound = (message: string) => new DomainError('NOT_FOUND', message);
export const conflict = (message: string) => new DomainError('CONFLICT', message);

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

const INTERNAL_MESSAGE = 'Something went wrong on our side. Quote the request id when reporting it.';

/**
 * What a client may see of any thrown value: a DomainError as it is, a
 * Prisma error we recognise as the DomainError it means, anything else as a
 * masked INTERNAL error (the original is for the log, never the client).
 */
export function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    switch (error.code) {
      case 'P2002':
        return conflict('A record with that value already exists.');
      case 'P2003':
        return conflict('That record is still referred to by others.');
      case 'P2025':
        return notFound('The record does not exist.');
    }
  }
  return undefined;
}

export function errorBody(error: unknown): ErrorBody {
  const known = toDomainError(error);
  if (known) return { code: known.code, message: known.message, status: known.status };
  return { code: 'INTERNAL', message: INTERNAL_MESSAGE, status: 500 };
}

/** A DomainError as the GraphQL error a client receives. */
export function toGraphQLError(error: DomainError, path?: ReadonlyArray<string | number>): GraphQLError {
  return new GraphQLError(error.message, {
    path,
    extensions: { code: error.code, status: error.status, ...(error.field ? { field: error.field } : {}) },
  });
}

export const maskedInternalError = (path?: ReadonlyArray<string | number>) =>
  new GraphQLError(INTERNAL_MESSAGE, { path, extensions: { code: 'INTERNAL', status: 500 } });
