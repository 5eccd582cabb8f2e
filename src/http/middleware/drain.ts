import type { MiddlewareHandler } from 'hono';

/**
 * While the gateway shuts down, every answer carries `Connection: close`, so
 * that no client (or proxy) sends another request on a connection that is
 * about to go.
 */
export function closeConnectionsWhenStopping(isStopping: () => boolean): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (isStopping()) c.res.headers.set('Connection', 'close');
  };
}
