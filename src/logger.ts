import { pino } from 'pino';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /**
   * The trace of the work under way, when traces are kept (observability/tracing/spans.ts
   * currentTraceIds): a line written while a traced request (or event) is at work carries its traceId
   * and spanId, so a log line leads to its trace. Given by whoever composes the process, so that
   * this module, which every layer logs through, depends on nothing above it.
   */
  traceIds?: () => { traceId: string; spanId: string } | undefined;
}

/** JSON logs on stdout; secrets that may reach a log line are redacted. */
export function createLogger(level: string, { traceIds }: LoggerOptions = {}): Logger {
  return pino({
    level,
    ...(traceIds ? { mixin: () => traceIds() ?? {} } : {}),
    base: { service: 'petstore-gateway' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[redacted]' },
  });
}
