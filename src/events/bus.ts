import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, trace } from '@opentelemetry/api';
import type { PubSub } from 'graphql-yoga';
import { Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_CHANNEL_PREFIX } from '../config.js';
import type { DomainEvent, EventPublisher, InventoryChanged, OrderChanged, PetStatusChanged } from '../domain/events.js';
import type { Logger } from '../logger.js';
import { tracer } from '../observability/tracing/spans.js';

/** The channels subscriptions listen on; inventory events are also keyed by pet. */
export type PetstoreChannels = {
  inventoryChanged: [payload: InventoryChanged];
  'inventoryChanged:pet': [petId: string, payload: InventoryChanged];
  orderChanged: [payload: OrderChanged];
  petStatusChanged: [payload: PetStatusChanged];
};

export type PetstorePubSub = PubSub<PetstoreChannels>;

/**
 * What each write changed, as the response cache's dependency tags
 * (src/http/dependency-tags/tags.ts), told to every instance: live
 * queries re-execute when one touches what their answer depends on.
 */
export interface WriteNotices {
  /** A write of this instance: heard here at once, and by the other instances through Redis. */
  publish(tags: readonly string[]): void;
  /** Hears every write's tags, this instance's and (with Redis) the others'; returns the way to stop. */
  listen(listener: (tags: readonly string[]) => void): () => void;
  /**
   * Called when Redis is back after an outage: the writes other instances made meanwhile were not
   * heard, so whatever depends on them must be read again.
   */
  onMissed(listener: () => void): () => void;
  /** Whether the notices go to the other instances too (through Redis), whose listeners this one cannot see. */
  readonly reachOtherInstances: boolean;
}

export interface EventBus {
  pubsub: PetstorePubSub;
  publisher: EventPublisher;
  /** What writes changed, across instances. */
  writes: WriteNotices;
  /** Subscriptions listening right now. */
  readonly openSubscriptions: number;
  /**
   * Ends every open subscription properly (SSE streams and WebSocket
   * operations complete), refuses new ones, then closes Redis.
   */
  close(): Promise<void>;
}

export interface EventBusOptions {
  /** ioredis options of the two clients (time bounds: see redisOptions in src/config.ts). */
  redisOptions?: RedisOptions;
  /** Log Redis outages here (default); false where the process watches Redis itself (src/main.ts). */
  reportOutages?: boolean;
  /**
   * Put before every topic (and so every Redis channel name), so that several
   * deployments, or test runs, can share one Redis without hearing each other.
   */
  channelPrefix?: string;
  /** Where Redis trouble and subscribers that fall behind are reported. */
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Events a subscriber may have waiting before its subscription is ended. */
  maxPending?: number;
}

/** How long close() waits for Redis to say goodbye before dropping the connection. */
const REDIS_QUIT_MS = 1_000;

/**
 * A subscriber that does not read (a client that stopped reading its SSE
 * stream or WebSocket) is ended, with a warning, once this many events wait
 * for it: unbounded, its queue would grow without end; yoga's own pubsub
 * throws from inside the event target at 1024, which ends the process.
 */
export const DEFAULT_MAX_PENDING = 1_000;

type Listener = (event: Event) => void;

/**
 * The W3C trace context of the write that published an event, carried in its payload when traces are
 * sent, so each delivery's span links to the mutation's trace, on this instance or another. Payloads
 * are read by field, so the extra field is seen by no client (and ignored by an instance that predates it).
 */
const TRACE_CONTEXT = '_traceContext';

/** The payload a subscriber is handed, without the trace context, and the span context of its publishing. */
function receivedEvent(payload: unknown): { payload: unknown; published?: ReturnType<Span['spanContext']> } {
  if (!payload || typeof payload !== 'object' || !(TRACE_CONTEXT in payload)) return { payload };
  const { [TRACE_CONTEXT]: carrier, ...rest } = payload as Record<string, unknown>;
  const published = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier as Record<string, string>));
  return { payload: rest, ...(published ? { published } : {}) };
}

/**
 * Events between writes and subscribers. With a Redis URL they go through
 * Redis pub/sub (yoga's redis event target), so a subscriber on one gateway
 * instance sees a write made on another; without, they stay in the process.
 *
 * Events are best effort: a write has committed before its events are
 * published, so Redis being away loses the events (with a warning in the
 * log) but never fails the write or the process.
 */
export function createEventBus(redisUrl?: string, options: EventBusOptions = {}): EventBus {
  const prefix = options.channelPrefix ?? DEFAULT_CHANNEL_PREFIX;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  const report = (command: string) => (error: unknown) => {
    options.logger?.warn({ err: error }, `Redis ${command} failed; the event is lost`);
  };
  // Few retries: an event held back for long is worse than one lost (the write itself is committed).
  const clients = redisUrl
    ? [0, 1].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 2, ...options.redisOptions }))
    : [];
  for (const client of clients) {
    // Listened to in any case: ioredis writes an unhandled 'error' event to the console.
    if (options.logger && options.reportOutages !== false) {
      reportOutages(client, options.logger, 'Redis unreachable; events are not shared between instances meanwhile');
    } else client.on('error', () => undefined);
  }
  const [publisher, subscriber] = clients;
  // The redis event target drops the promises of PUBLISH and SUBSCRIBE; a rejected one
  // would end the process (unhandled rejection). These facades give it the calls it
  // makes, with their failures reported instead.
  const target: EventTarget =
    publisher && subscriber
      ? createRedisEventTarget({
          publishClient: {
            publish: (channel: string, message: string) => publisher.publish(channel, message).catch(report('PUBLISH')),
          } as unknown as Redis,
          subscribeClient: {
            on: (event: 'message', listener: (channel: string, message: string) => void) =>
              subscriber.on(event, listener),
            subscribe: (channel: string) => subscriber.subscribe(channel).catch(report('SUBSCRIBE')),
            unsubscribe: (channel: string) => subscriber.unsubscribe(channel).catch(report('UNSUBSCRIBE')),
          } as unknown as Redis,
          // Whatever else is published on our channels is ignored, not thrown inside ioredis.
          serializer: { stringify: JSON.stringify, parse: parseOrNull },
        })
      : new EventTarget();

  const channelOf = (topic: string, id?: string) => (id === undefined ? `${prefix}${topic}` : `${prefix}${topic}:${id}`);

  // Every subscription's ending, so shutdown can end them properly instead of cutting them off.
  const open = new Set<() => void>();
  let closed = false;

  /**
   * A subscription: listens from the moment it is made, queues what arrives
   * until it is read, and ends (done) when returned, when the bus closes, or
   * when its reader falls `maxPending` events behind.
   */
  const subscribe = (topic: string, id?: string): AsyncIterableIterator<unknown> => {
    const channel = channelOf(topic, id);
    // Each event with the span of its delivery, which ends when the subscriber takes it.
    const queue: { payload: unknown; delivery: Span }[] = [];
    let reader: ((result: IteratorResult<unknown>) => void) | undefined;
    let ended = closed;
    const end = () => {
      if (ended) return;
      ended = true;
      open.delete(end);
      target.removeEventListener(channel, listener);
      for (const { delivery } of queue) delivery.end();
      queue.length = 0;
      reader?.({ done: true, value: undefined });
      reader = undefined;
    };
    const listener: Listener = (event) => {
      const detail = (event as CustomEvent<unknown>).detail;
      if (ended || detail === null || detail === undefined) return;
      const { payload, published } = receivedEvent(detail);
      // A trace of its own per delivery (a subscription outlives any one trace), linked to the write's.
      const delivery = tracer.startSpan(
        `process ${channel}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: { 'messaging.operation.type': 'process', 'messaging.destination.name': channel, ...(redisUrl ? { 'messaging.system': 'redis' } : {}) },
          ...(published ? { links: [{ context: published }] } : {}),
        },
        ROOT_CONTEXT,
      );
      if (reader) {
        delivery.end();
        reader({ done: false, value: payload });
        reader = undefined;
      } else if (queue.length < maxPending) {
        queue.push({ payload, delivery });
      } else {
        delivery.end();
        options.logger?.warn({ channel, pending: queue.length }, 'a subscriber stopped reading; its subscription ended');
        end();
      }
    };
    if (!ended) {
      target.addEventListener(channel, listener);
      open.add(end);
    }
    const finished = (value?: unknown) => {
      end();
      return Promise.resolve({ done: true as const, value });
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => {
        const next = queue.shift();
        if (next) {
          next.delivery.end();
          return Promise.resolve({ done: false, value: next.payload });
        }
        if (ended) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve) => {
          reader = resolve;
        });
      },
      return: finished,
      throw: (error?: unknown) => {
        end();
        return Promise.reject(error);
      },
    };
  };

  const publish = (topic: string, ...args: unknown[]) => {
    const [id, payload] = args.length > 1 ? [String(args[0]), args[1]] : [undefined, args[0]];
    const channel = channelOf(topic, id);
    // A child of the write that committed (the mutation's span), with Redis' PUBLISH beneath it.
    const span = tracer.startSpan(`send ${channel}`, {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.operation.type': 'send', 'messaging.destination.name': channel, ...(redisUrl ? { 'messaging.system': 'redis' } : {}) },
    });
    const within = trace.setSpan(context.active(), span);
    const carrier: Record<string, string> = {};
    if (span.isRecording()) propagation.inject(within, carrier);
    const detail = payload && typeof payload === 'object' && 'traceparent' in carrier ? { ...payload, [TRACE_CONTEXT]: carrier } : payload;
    context.with(within, () => target.dispatchEvent(new CustomEvent(channel, { detail })));
    span.end();
  };

  const pubsub = { publish, subscribe } as unknown as PetstorePubSub;

  // Each instance hears its own writes at once (even while Redis is away) and skips their echo from Redis.
  const instance = crypto.randomUUID();
  const writeChannel = channelOf('writes');
  const writeListeners = new Set<(tags: readonly string[]) => void>();
  const missedListeners = new Set<() => void>();
  const tell = (tags: readonly string[]) => {
    for (const listener of writeListeners) listener(tags);
  };
  target.addEventListener(writeChannel, (event) => {
    const notice = (event as CustomEvent<unknown>).detail as { from?: unknown; tags?: unknown } | null;
    if (!notice || notice.from === instance || !Array.isArray(notice.tags)) return;
    tell(notice.tags.filter((tag): tag is string => typeof tag === 'string'));
  });
  // ioredis says `ready` at its first connection and after each reconnection (it subscribes again by itself).
  let subscribedBefore = false;
  subscriber?.on('ready', () => {
    if (subscribedBefore) for (const listener of missedListeners) listener();
    subscribedBefore = true;
  });
  const writes: WriteNotices = {
    publish(tags) {
      tell(tags);
      if (publisher) target.dispatchEvent(new CustomEvent(writeChannel, { detail: { from: instance, tags } }));
    },
    listen(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
    },
    onMissed(listener) {
      missedListeners.add(listener);
      return () => missedListeners.delete(listener);
    },
    reachOtherInstances: publisher !== undefined,
  };

  const publishEvent: EventPublisher['publish'] = (event: DomainEvent) => {
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
      case 'petChanged':
        // No subscription tells it: it says what a write changed, for its dependency tags.
        break;
    }
  };

  return {
    pubsub,
    publisher: { publish: publishEvent },
    writes,
    get openSubscriptions() {
      return open.size;
    },
    async close() {
      closed = true;
      for (const end of [...open]) end();
      await Promise.all(
        clients.map(async (client) => {
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<void>((resolve) => {
            timer = setTimeout(resolve, REDIS_QUIT_MS);
          });
          await Promise.race([client.quit().catch(() => undefined), late]);
          clearTimeout(timer);
          client.disconnect();
        }),
      );
    },
  };
}

function parseOrNull(message: string): unknown {
  try {
    return JSON.parse(message);
  } catch {
    return null;
  }
}

/**
 * Logs a Redis client's outages: once when it loses its connection (not at
 * every reconnection attempt) and once when it is back. Without an `error`
 * listener ioredis would print each failure to the console itself.
 */
export function reportOutages(client: Redis, logger: Pick<Logger, 'warn' | 'info'>, message: string) {
  let reachable = true;
  client.on('error', (error: unknown) => {
    if (!reachable) return;
    reachable = false;
    logger.warn({ err: error }, message);
  });
  client.on('ready', () => {
    if (reachable) return;
    reachable = true;
    logger.info('Redis reachable again');
  });
}
