import type { Logger } from '../logger.js';

/**
 * Tells operators once that a service is unreachable and once that it is back,
 * with the cause and how long it lasted, instead of a log line (and a stack)
 * for every request that failed meanwhile.
 */
export interface OutageLog {
  /** A call failed because the service is unreachable; logged only when an outage begins. */
  failed(cause: unknown): void;
  /** A call succeeded; logged only when it ends an outage. */
  recovered(): void;
  /** Whether the service is unreachable as far as this process knows. */
  readonly down: boolean;
}

export function outageLog(logger: Pick<Logger, 'warn' | 'info'>, service: string, consequence: string): OutageLog {
  let since: number | undefined;
  let failures = 0;
  return {
    failed(cause) {
      failures += 1;
      if (since !== undefined) return;
      since = Date.now();
      logger.warn({ service, cause: describe(cause) }, `${service} unavailable; ${consequence}`);
    },
    recovered() {
      if (since === undefined) return;
      logger.info({ service, outageMs: Date.now() - since, failedCalls: failures }, `${service} available again`);
      since = undefined;
      failures = 0;
    },
    get down() {
      return since !== undefined;
    },
  };
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
}
