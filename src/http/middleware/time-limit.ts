import type { MiddlewareHandler } from 'hono';
import { whileRequestLasts } from '../../database/cancellation.js';
import { DomainError } from '../../errors.js';
import { refusal } from '../refusal.js';
import type { GatewayEnv } from '../types.js';

/**
 * A request still running after the limit is answered 503 TIMEOUT at once.
 * The answer is the refusal itself, not a thrown exception, so no error
 * handler turns it into a 500. Its `deadline` signal is aborted then, so
 * GraphQL starts no resolver after it (useRequestDeadline), and a statement
 * of it still running is cancelled in PostgreSQL (src/database/cancellation.ts):
 * a transaction it was part of rolls back as a whole.
 */
export function limitDuration(ms: number): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new AbortController();
    c.set('deadline', deadline.signal);
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => {
        deadline.abort(new DomainError('TIMEOUT', `The request took longer than ${ms} ms and was stopped.`));
        resolve('expired');
      }, ms);
    });
    try {
      const outcome = await Promise.race([whileRequestLasts(deadline.signal, next).then(() => 'done' as const), expired]);
      if (outcome === 'expired') {
        c.res = refusal(c, new DomainError('TIMEOUT', `The request took longer than ${ms} ms and was stopped.`));
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
