import { trace as tracing } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { failSpan } from '../../observability/tracing/spans.js';
import { requestIdFrom } from '../request.js';
import type { GatewayEnv } from '../types.js';

/**
 * The first middleware: gives the request its id (the client's X-Request-Id
 * when acceptable) and, once answered, sends the id back, counts the request
 * and its error code, and writes its one log line (no headers, tokens or
 * bodies). GraphQL errors are counted as yoga sends them; here only the
 * spec's Error bodies (REST, the guards, 404), whose code the refusal noted.
 */
export function observeRequests({ logger, metrics }: { logger: Logger; metrics: Metrics }): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const startedAt = performance.now();
    const requestId = requestIdFrom(c.req.header('x-request-id'));
    const trace: GatewayEnv['Variables']['trace'] = {};
    c.set('requestId', requestId);
    c.set('trace', trace);
    // The HTTP server span (OpenTelemetry's node:http instrumentation), when traces are sent.
    const span = tracing.getActiveSpan();
    await next();
    // Set on the final response: handlers such as yoga return their own Response object.
    c.res.headers.set('X-Request-Id', requestId);
    const status = c.res.status;
    const operation = trace.operation ?? `${c.req.method} ${c.req.routePath}`;
    const seconds = (performance.now() - startedAt) / 1000;
    metrics.requests.inc({ operation, status });
    metrics.requestDuration.observe({ operation, status }, seconds);
    if (trace.errorCode) metrics.errors.inc({ code: trace.errorCode });
    if (span?.isRecording()) {
      // The route as OpenAPI writes it (/pets/{petId}); a request no route took has none.
      const route = c.req.routePath.includes('*') ? undefined : c.req.routePath.replace(/:(\w+)/g, '{$1}');
      if (route) {
        span.setAttribute('http.route', route);
        span.updateName(`${c.req.method} ${route}`);
      }
      span.setAttribute('petstore.request_id', requestId);
      if (trace.errorCode) failSpan(span, [trace.errorCode]);
    }
    logger.info(
      { requestId, method: c.req.method, path: c.req.path, operation, status, durationMs: Math.round(seconds * 1000) },
      'request',
    );
  };
}
