import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, type PubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { DomainEvent, EventPublisher, InventoryChanged, OrderChanged, PetStatusChanged } from '../domain/events.js';

/** The channels subscriptions listen on; inventory events are also keyed by pet. */
export type PetstoreChannels = {
  inventoryChanged: [payload: InventoryChanged];
  'inventoryChanged:pet': [petId: string, payload: InventoryChanged];
  orderChanged: [payload: OrderChanged];
  petStatusChanged: [payload: PetStatusChanged];
};

export type PetstorePubSub = PubSub<PetstoreChannels>;

export interface EventBus {
  pubsub: PetstorePubSub;
  publisher: EventPublisher;
  /** Subscriptions listening right now. */
  readonly openSubscriptions: number;
  /** Ends every open subscription properly (SSE streams and WebSocket operations complete), then closes Redis. */
  close(): Promise<void>;
}

/**
 * Events between writes and subscribers. With a Redis URL they go through
 * Redis pub/sub (yoga's redis event target), so a subscriber on one gateway
 * instance sees a write made on another; without, they stay in the process.
 */
export function createEventBus(redisUrl?: string): EventBus {
  const clients = redisUrl ? [new Redis(redisUrl), new Redis(redisUrl)] : [];
  const [publishClient, subscribeClient] = clients;
  const shared = createPubSub<PetstoreChannels>(
    publishClient && subscribeClient ? { eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) } : {},
  );
  // Every subscription's iterator, so shutdown can end them instead of cutting them off.
  const open = new Set<AsyncIterator<unknown>>();
  const pubsub: PetstorePubSub = {
    publish: shared.publish,
    subscribe: ((...args: Parameters<PetstorePubSub['subscribe']>) => {
      const source = (shared.subscribe as unknown as (...a: unknown[]) => AsyncIterable<unknown>)(...args);
      const iterator = source[Symbol.asyncIterator]();
      open.add(iterator);
      const forget = <T>(result: T) => {
        open.delete(iterator);
        return result;
      };
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next: () => iterator.next(),
        return: (value?: unknown) =>
          (iterator.return?.(value) ?? Promise.resolve({ done: true as const, value })).then(forget),
        throw: (error?: unknown) => (iterator.throw?.(error) ?? Promise.reject(error)).finally(() => open.delete(iterator)),
      };
    }) as PetstorePubSub['subscribe'],
  };
  const publisher: EventPublisher = {
    publish(event: DomainEvent) {
      switch (event.type) {
        case 'inventoryChanged':
          pubsub.publish('inventoryChanged', event.payload);
          pubsub.publish('inventoryChanged:pet', event.payload.petId, event.payload);
          break;
        case 'orderChanged':
          pubsub.publish('orderChanged', event.payload);
          break;
        case 'petStatusChanged':
          pubsub.publish('petStatusChanged', event.payload);
          break;
      }
    },
  };
  return {
    pubsub,
    publisher,
    get openSubscriptions() {
      return open.size;
    },
    async close() {
      await Promise.all([...open].map((iterator) => iterator.return?.()));
      open.clear();
      await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}
