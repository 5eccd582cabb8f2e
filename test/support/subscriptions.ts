import { createClient } from 'graphql-ws';
import { withoutCost } from './http.js';
import WebSocket from 'ws';

/**
 * Test clients for GraphQL subscriptions, as a browser or app would use them:
 * GraphQL over Server-Sent Events (yoga's "distinct connections" mode: one
 * POST per subscription with `Accept: text/event-stream`), and GraphQL over
 * WebSocket (the graphql-ws protocol, token in the connection parameters).
 */

export interface ExecutionResult<T = Record<string, unknown>> {
  data?: T | null;
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
}

/** How a subscription ended, as its client saw it. */
export type Ending =
  /** The server said the operation is complete (SSE `event: complete` then end of stream; WS `complete`). */
  | { kind: 'complete' }
  /** The stream or socket ended without the operation being completed. */
  | { kind: 'cut'; detail: string }
  /** The server sent an error message for the operation (WS `error`). */
  | { kind: 'error'; errors: unknown };

export interface TestSubscription<T = Record<string, unknown>> {
  /** The next payload the server sent (an ExecutionResult), waiting up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<ExecutionResult<T>>;
  /** Every payload received that next() has not taken yet. */
  pending(): ExecutionResult<T>[];
  /** Settles once the subscription has ended, telling how. */
  ended: Promise<Ending>;
  /** Ends the subscription from the client side. */
  close(): Promise<void>;
}

/** A queue of results with waiters, shared by both transports. */
function resultQueue<T>() {
  const results: ExecutionResult<T>[] = [];
  const waiters: Array<(result: ExecutionResult<T>) => void> = [];
  let ending: Ending | undefined;
  const endWaiters: Array<(ending: Ending) => void> = [];
  return {
    push(given: ExecutionResult<T>) {
      // As over HTTP (withoutCost): the cost of a query's answer is checked, and taken out.
      const result = withoutCost(given).body;
      const waiter = waiters.shift();
      if (waiter) waiter(result);
      else results.push(result);
    },
    end(how: Ending) {
      if (ending) return;
      ending = how;
      for (const waiter of endWaiters) waiter(how);
    },
    ended: new Promise<Ending>((resolve) => {
      endWaiters.push(resolve);
    }),
    pending: () => [...results],
    next(timeoutMs = 10_000): Promise<ExecutionResult<T>> {
      const ready = results.shift();
      if (ready) return Promise.resolve(ready);
      if (ending) return Promise.reject(new Error(`the subscription has ended: ${JSON.stringify(ending)}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(deliver), 1);
          reject(new Error(`no event within ${timeoutMs} ms`));
        }, timeoutMs);
        const deliver = (result: ExecutionResult<T>) => {
          clearTimeout(timer);
          resolve(result);
        };
        waiters.push(deliver);
      });
    },
  };
}

export interface SubscribeOptions {
  variables?: Record<string, unknown>;
  /** Sent as `Authorization: Bearer <token>`; anonymous when absent. */
  token?: string;
  headers?: Record<string, string>;
  /** The request's `extensions` (a live query's `livePatch`, say). */
  extensions?: Record<string, unknown>;
}

/** One SSE event as sent: `event:` and the joined `data:` lines. */
interface SseEvent {
  event: string;
  data: string;
}

/**
 * Subscribes over GraphQL over SSE and resolves once the server has answered
 * with the event stream (its first bytes, a keep-alive comment, are received).
 */
export async function subscribeSse<T = Record<string, unknown>>(
  graphqlUrl: string,
  query: string,
  options: SubscribeOptions = {},
): Promise<TestSubscription<T> & { status: number; headers: Headers }> {
  const response = await fetch(graphqlUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ query, variables: options.variables, extensions: options.extensions }),
  });
  const queue = resultQueue<T>();
  if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await response.text();
    throw new Error(`not an event stream (${response.status}): ${text.slice(0, 500)}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let completed = false;
  let firstBytes: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    firstBytes = resolve;
  });
  const dispatch = (event: SseEvent) => {
    if (event.event === 'next') queue.push(JSON.parse(event.data) as ExecutionResult<T>);
    else if (event.event === 'complete') completed = true;
  };
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        firstBytes();
        buffer += decoder.decode(value, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const event: SseEvent = { event: 'message', data: '' };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') event.event = value;
            else if (field === 'data') data.push(value);
          }
          if (block.split('\n').every((line) => line.startsWith(':'))) continue;
          event.data = data.join('\n');
          dispatch(event);
        }
      }
      queue.end(completed ? { kind: 'complete' } : { kind: 'cut', detail: 'the stream ended without event: complete' });
    } catch (error) {
      queue.end({ kind: 'cut', detail: `the stream failed: ${String(error)}` });
    } finally {
      firstBytes();
    }
  })();
  await started;
  return {
    status: response.status,
    headers: response.headers,
    next: queue.next,
    pending: queue.pending,
    ended: queue.ended,
    async close() {
      // Cancelling the reader closes the connection; the server then ends the operation.
      await reader.cancel().catch(() => undefined);
      queue.end({ kind: 'cut', detail: 'closed by the client' });
    },
  };
}

export interface WebSocketConnection {
  /** The close code and reason the socket ended with, once it has. */
  closed: Promise<{ code: number; reason: string }>;
  subscribe<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>): TestSubscription<T>;
  dispose(): Promise<void>;
}

/**
 * Opens a graphql-ws connection (not lazy: the socket stays open until
 * disposed or closed by the server, and is never retried) and resolves once
 * the server has acknowledged it.
 */
export async function connectWebSocket(
  graphqlUrl: string,
  options: { token?: string; connectionParams?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<WebSocketConnection> {
  let closedWith: (close: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    closedWith = resolve;
  });
  let acknowledged: () => void = () => {};
  let refused: (error: unknown) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    acknowledged = resolve;
    refused = reject;
  });
  const client = createClient({
    url: graphqlUrl.replace(/^http/, 'ws'),
    // Headers on the upgrade request (X-Request-Id, say), as a browser cannot but a server-side client can.
    webSocketImpl: options.headers
      ? class extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, { headers: options.headers });
          }
        }
      : WebSocket,
    lazy: false,
    retryAttempts: 0,
    shouldRetry: () => false,
    connectionParams: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.connectionParams,
    },
    onNonLazyError: (error) => refused(error),
    on: {
      connected: () => acknowledged(),
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        closedWith({ code, reason: String(reason) });
        refused(new Error(`the socket closed (${code} ${reason}) before it was acknowledged`));
      },
    },
  });
  await ready;
  return {
    closed,
    subscribe<T>(query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>) {
      const queue = resultQueue<T>();
      const unsubscribe = client.subscribe<T>(
        { query, variables, ...(extensions ? { extensions } : {}) },
        {
          next: (result) => queue.push(result as ExecutionResult<T>),
          error: (error) => {
            const code = (error as { code?: number }).code;
            if (typeof code === 'number') queue.end({ kind: 'cut', detail: `the socket closed with ${code}` });
            else queue.end({ kind: 'error', errors: error });
          },
          complete: () => queue.end({ kind: 'complete' }),
        },
      );
      return {
        next: queue.next,
        pending: queue.pending,
        ended: queue.ended,
        async close() {
          unsubscribe();
          queue.end({ kind: 'complete' });
        },
      };
    },
    dispose: async () => {
      await client.dispose();
    },
  };
}

/** The gateway's `petstore_open_subscriptions` gauge, read from /metrics. */
export async function openSubscriptions(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('petstore_open_subscriptions '));
  if (!line) throw new Error('petstore_open_subscriptions is missing from /metrics');
  return Number(line.split(' ')[1]);
}

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until the gateway at `baseUrl` has (at least) `count` subscriptions open. */
export function untilSubscribed(baseUrl: string, count: number) {
  return waitFor(async () => (await openSubscriptions(baseUrl)) >= count, `${count} open subscriptions`);
}
