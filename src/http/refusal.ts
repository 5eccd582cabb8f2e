import type { Context } from 'hono';
import { type DomainError, refusalBody } from '../errors.js';
import { GRAPHQL_PATH } from './routes.js';
import type { GatewayEnv } from './types.js';

/**
 * A request refused by the HTTP layer, answered with its Error body (see
 * refusalBody) and its code noted for the request's metrics.
 */
export function refusal(c: Context<GatewayEnv>, error: DomainError): Response {
  c.get('trace').errorCode = error.code;
  const body = refusalBody(error, c.get('requestId'), c.req.path === GRAPHQL_PATH);
  return c.json(body, body.status as 400);
}
