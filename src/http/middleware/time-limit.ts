import type { MiddlewareHandler } from 'hono';
import { DomainError } from '../../errors.js';
import { refusal } from '../refusal.js';
import type { GatewayEnv } from '../types.js';

/**
 * A request still running after the limit is answered 503 TIMEOUT at once.
 * The answer is the refusal itself, not a thrown exception, so no error
 * handler turns it into a 500. The work behind it is not interrupted: a
 * statement still waiting ends at the statement timeout, and a transaction
 * either commits or rolls back as a whole.
 */
export function limitDuration(ms: number): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), ms);
    });
    try {
      const outcome = await Promise.race([next().then(() => 'done' as const), expired]);
      if (outcome === 'expired') {
        c.res = refusal(c, new DomainError('TIMEOUT', `The request took longer than ${ms} ms and was stopped.`));
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
