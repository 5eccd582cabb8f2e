import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { PetStatusChanged } from '../../src/domain/events.js';
import { createEventBus, DEFAULT_MAX_PENDING } from '../../src/events/bus.js';
import type { Logger } from '../../src/logger.js';
import { REDIS_URL } from '../support/operations.js';
import { waitFor } from '../support/subscriptions.js';

/**
 * The event bus on its own: what a subscriber receives, how subscriptions
 * end, and what happens to one whose reader stops reading.
 */

const statusChange = (id: number) => ({
  type: 'petStatusChanged' as const,
  payload: {
    pet: { id: String(id), name: `pet ${id}`, categoryId: '1', status: 'sold' as const },
    previousStatus: 'available' as const,
  } satisfies PetStatusChanged,
});

/** A logger that keeps its warnings, for the assertions. */
function recordingLogger() {
  const warnings: Array<{ fields: unknown; message: string }> = [];
  const logger = {
    warn: (fields: unknown, message: string) => {
      warnings.push({ fields, message });
    },
    info: () => undefined,
  };
  return { warnings, logger: logger as unknown as Pick<Logger, 'warn' | 'info'> };
}

describe('the event bus', () => {
  it('delivers what is published after subscribing, in order, and nothing after return()', async () => {
    const bus = createEventBus();
    bus.publisher.publish(statusChange(0));
    const subscription = bus.pubsub.subscribe('petStatusChanged')[Symbol.asyncIterator]();
    expect(bus.openSubscriptions).toBe(1);
    bus.publisher.publish(statusChange(1));
    bus.publisher.publish(statusChange(2));
    expect((await subscription.next()).value).toMatchObject({ pet: { id: '1' } });
    expect((await subscription.next()).value).toMatchObject({ pet: { id: '2' } });
    const waiting = subscription.next();
    await subscription.return?.();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(bus.openSubscriptions).toBe(0);
    bus.publisher.publish(statusChange(3));
    expect(await subscription.next()).toEqual({ done: true, value: undefined });
    await bus.close();
  });

  it('keys inventory events by pet as well', async () => {
    const bus = createEventBus();
    const one = bus.pubsub.subscribe('inventoryChanged:pet', '1')[Symbol.asyncIterator]();
    const all = bus.pubsub.subscribe('inventoryChanged')[Symbol.asyncIterator]();
    bus.publisher.publish({ type: 'inventoryChanged', payload: { petId: '2', quantity: 5, status: 'available', previousStatus: 'available' } });
    bus.publisher.publish({ type: 'inventoryChanged', payload: { petId: '1', quantity: 7, status: 'available', previousStatus: 'available' } });
    expect((await one.next()).value).toEqual({ petId: '1', quantity: 7, status: 'available', previousStatus: 'available' });
    expect((await all.next()).value).toMatchObject({ petId: '2' });
    expect((await all.next()).value).toMatchObject({ petId: '1' });
    await bus.close();
  });

  it('close() ends every subscription (a waiting reader gets done), and later ones end at once', async () => {
    const bus = createEventBus();
    const first = bus.pubsub.subscribe('orderChanged')[Symbol.asyncIterator]();
    const second = bus.pubsub.subscribe('petStatusChanged')[Symbol.asyncIterator]();
    const waiting = first.next();
    await bus.close();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await second.next()).toEqual({ done: true, value: undefined });
    expect(bus.openSubscriptions).toBe(0);
    const late = bus.pubsub.subscribe('orderChanged')[Symbol.asyncIterator]();
    expect(await late.next()).toEqual({ done: true, value: undefined });
    expect(bus.openSubscriptions).toBe(0);
  });

  it('ends, with a warning, a subscription whose reader falls too far behind; the process and the others carry on', async () => {
    const { warnings, logger } = recordingLogger();
    const bus = createEventBus(undefined, { logger });
    const stalled = bus.pubsub.subscribe('petStatusChanged')[Symbol.asyncIterator]();
    const reading = bus.pubsub.subscribe('petStatusChanged')[Symbol.asyncIterator]();
    const received: unknown[] = [];
    const reader = (async () => {
      for (;;) {
        const { done, value } = await reading.next();
        if (done) return;
        received.push(value);
      }
    })();
    // More than yoga's own pubsub allows (1024), where it throws inside the event target and ends the process.
    for (let i = 0; i < DEFAULT_MAX_PENDING + 100; i++) {
      bus.publisher.publish(statusChange(i));
      if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor(() => received.length === DEFAULT_MAX_PENDING + 100, 'the reading subscriber to get every event');
    expect(await stalled.next()).toEqual({ done: true, value: undefined });
    expect(warnings).toEqual([
      { fields: expect.objectContaining({ pending: DEFAULT_MAX_PENDING }), message: expect.stringContaining('stopped reading') },
    ]);
    expect(bus.openSubscriptions).toBe(1);
    await bus.close();
    await reader;
  });

  it('through Redis: channels carry the prefix, and what else is published on them is ignored', async () => {
    const prefix = `test:${randomUUID()}:`;
    const bus = createEventBus(REDIS_URL, { channelPrefix: prefix });
    const redis = new Redis(REDIS_URL);
    try {
      const subscription = bus.pubsub.subscribe('petStatusChanged')[Symbol.asyncIterator]();
      await waitFor(
        async () => Number(((await redis.pubsub('NUMSUB', `${prefix}petStatusChanged`)) as unknown[])[1]) === 1,
        'the subscription on Redis',
      );
      // Not JSON, and JSON null: neither reaches the subscriber nor breaks the bus.
      await redis.publish(`${prefix}petStatusChanged`, 'not json');
      await redis.publish(`${prefix}petStatusChanged`, 'null');
      bus.publisher.publish(statusChange(9));
      expect((await subscription.next()).value).toMatchObject({ pet: { id: '9' } });
      await subscription.return?.();
      await waitFor(
        async () => Number(((await redis.pubsub('NUMSUB', `${prefix}petStatusChanged`)) as unknown[])[1]) === 0,
        'the unsubscription on Redis',
      );
    } finally {
      redis.disconnect();
      await bus.close();
    }
  });
});
