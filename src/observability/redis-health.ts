import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { outageLog } from './outages.js';

/** How often Redis is asked whether it answers. */
const CHECK_EVERY_MS = 2_000;

export interface RedisHealth {
  /** `degraded` while Redis does not answer: the gateway serves on, without what Redis shares. */
  readonly status: 'ok' | 'degraded';
  /** What the instances stop sharing while Redis is away, for /readyz and the log. */
  readonly lost: readonly string[];
  stop(): void;
}

/**
 * Asks Redis every two seconds (PING, bounded by the client's command
 * timeout), so that a Redis that hangs without closing its connection is seen
 * as well as one that refuses: the outage is logged once with what it costs,
 * /readyz says `degraded`, and both end by themselves when Redis answers again.
 */
export function watchRedis(client: Redis, logger: Pick<Logger, 'warn' | 'info'>, lost: readonly string[]): RedisHealth {
  const outage = outageLog(logger, 'Redis', `${lost.join('; ')} meanwhile`);
  const check = () =>
    client.ping().then(
      () => outage.recovered(),
      (error: unknown) => outage.failed(error),
    );
  const timer = setInterval(() => void check(), CHECK_EVERY_MS);
  timer.unref();
  void check();
  return {
    get status() {
      return outage.down ? 'degraded' : 'ok';
    },
    lost,
    stop: () => clearInterval(timer),
  };
}
