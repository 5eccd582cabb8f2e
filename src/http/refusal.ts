import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type DomainError, errorBody, isDatabaseUnavailable, refusalBody, toDomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { OutageLog } from '../observability/outages.js';
import { currentTraceId } from '../observability/tracing/spans.js';
import { GRAPHQL_PATH } from './routes.js';
import type { GatewayEnv } from './types.js';

/**
 * A request refused by the HTTP layer, answered with its Error body (see
 * refusalBody), its Retry-After when it has one, and its code noted for the
 * request's metrics.
 */
export function refusal(c: Context<GatewayEnv>, error: DomainError): Response {
  c.get('trace').errorCode = error.code;
  if (error.retryAfterSeconds !== undefined) c.header('Retry-After', String(error.retryAfterSeconds));
  const body = refusalBody(error, { requestId: c.get('requestId'), traceId: currentTraceId() }, c.req.path === GRAPHQL_PATH);
  return c.json(body, body.status as 400);
}

export interface ErrorAnswerOptions {
  logger: Pick<Logger, 'error'>;
  /** Told when the database could not answer: the outage is logged once, not per request. */
  databaseOutage?: Pick<OutageLog, 'failed'>;
}

/**
 * Any error thrown while answering a REST route (or escaping every handler) as
 * the spec's Error body: a domain error as it is, the database's unavailability
 * as 503 UNAVAILABLE with Retry-After, anything else masked as INTERNAL and
 * logged with the request id.
 */
export function errorAnswer(c: Context<GatewayEnv>, error: unknown, { logger, databaseOutage }: ErrorAnswerOptions) {
  const known = toDomainError(error);
  const body = errorBody(error, { requestId: c.get('requestId'), traceId: currentTraceId() });
  c.get('trace').errorCode = body.code;
  if (known?.retryAfterSeconds !== undefined) c.header('Retry-After', String(known.retryAfterSeconds));
  if (known?.code === 'UNAVAILABLE' && isDatabaseUnavailable(error)) databaseOutage?.failed(error);
  else if (body.status >= 500) logger.error({ err: error, requestId: c.get('requestId') }, 'request failed');
  return c.json(body, body.status as ContentfulStatusCode);
}
