import { pino } from 'pino';

export type Logger = pino.Logger;

/** JSON logs on stdout; secrets that may reach a log line are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'petstore-gateway' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[redacted]' },
  });
}
