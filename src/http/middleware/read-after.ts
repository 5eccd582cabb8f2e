import type { MiddlewareHandler } from 'hono';
import { parsePosition } from '../../database/replicas.js';
import { validationFailed } from '../../errors.js';
import { refusal } from '../refusal.js';
import type { GatewayEnv } from '../types.js';

/** Sent back after every write: the position a later read must have seen (read-your-writes). */
export const WRITE_POSITION_HEADER = 'Write-Position';
/** Sent by a caller with the last Write-Position it was given. */
export const READ_AFTER_HEADER = 'Read-After';

export const badPosition = (where: string, text: string) =>
  validationFailed(
    where,
    `${where} must be a write position as Write-Position gave it (such as 0/16B3748), not ${JSON.stringify(text.slice(0, 40))}.`,
  );

/**
 * The Read-After header, parsed once for GraphQL and REST alike: a read that
 * carries it runs on a replica only once that replica has replayed the write,
 * else on the primary. A malformed one is refused (400) rather than ignored,
 * since ignoring it would silently drop the caller's guarantee.
 */
export function readAfterPosition(): MiddlewareHandler<GatewayEnv> {
  return (c, next) => {
    const text = c.req.header(READ_AFTER_HEADER);
    if (text === undefined) return next();
    const position = parsePosition(text.trim());
    if (position === undefined) return Promise.resolve(refusal(c, badPosition(READ_AFTER_HEADER, text)));
    c.set('readAfter', position);
    return next();
  };
}
