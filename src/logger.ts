import { pino } from 'pino';
import { currentTraceIds } from './observability/tracing/spans.js';

export type Logger = pino.Logger;

/**
 * JSON logs on stdout; secrets that may reach a log line are redacted. A line written while a traced
 * request (or event) is at work carries its traceId and spanId, so a log line leads to its trace.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    mixin: () => currentTraceIds() ?? {},
    base: { service: 'petstore-gateway' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[redacted]' },
  });
}
