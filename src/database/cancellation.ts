import { AsyncLocalStorage } from 'node:async_hooks';
import net from 'node:net';
import type pg from 'pg';

/**
 * Statements stop when the request they serve does. A request runs inside
 * `whileRequestLasts(signal, …)`; every statement it sends (through Prisma,
 * whatever the depth of calls) is tied to that signal, and when the signal
 * aborts (the request reached REQUEST_TIMEOUT_MS and was answered 503) a
 * statement still running is cancelled in PostgreSQL with the protocol's
 * CancelRequest, as psql's Ctrl-C does: the connection goes back to the pool
 * at once instead of staying busy until the statement ends, and a transaction
 * it was part of rolls back. Through PgBouncer the request is passed on to the
 * right server connection. The embedded database cannot stop a statement it is
 * running (it runs on this thread), so there the statement ends on its own.
 */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

export function whileRequestLasts<T>(signal: AbortSignal, work: () => T): T {
  return requestSignal.run(signal, work);
}

/** For work that serves several requests at once (a batch of lookups): no one request's end stops it. */
export function forNoRequestInParticular<T>(work: () => T): T {
  return requestSignal.exit(work);
}

/** How long the connection that carries a CancelRequest may take before it is given up. */
const CANCEL_TIMEOUT_MS = 5_000;

/** Ties each statement a pooled client sends to the signal of the request it is sent for. */
export function cancelWithRequest(client: pg.PoolClient, onCancel?: () => void) {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const signal = requestSignal.getStore();
    if (!signal || signal.aborted) return query(...args);
    const abort = () => {
      onCancel?.();
      sendCancelRequest(client as unknown as BackendKey);
    };
    signal.addEventListener('abort', abort, { once: true });
    const done = () => signal.removeEventListener('abort', abort);
    // pg.Pool's query passes a callback; a client's own callers (transactions) take the promise.
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (...results: unknown[]) => {
        done();
        return (callback as (...values: unknown[]) => unknown)(...results);
      };
    }
    const result = query(...args);
    if (result instanceof Promise) result.then(done, done);
    return result;
  };
}

/** What a connected pg client knows of its server and of the key its server gave it (BackendKeyData). */
interface BackendKey {
  host: string;
  port: number;
  processID: number | null;
  secretKey: number | null;
}

const CANCEL_REQUEST_CODE = 80_877_102;

/**
 * The protocol's CancelRequest, on a connection of its own: the server cancels whatever the
 * connection with this key is running, and closes this one. Nothing comes back to wait for.
 */
function sendCancelRequest({ host, port, processID, secretKey }: BackendKey) {
  if (processID === null || secretKey === null) return;
  const socket = host.startsWith('/') ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  socket.on('error', () => socket.destroy());
  socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy());
  socket.on('connect', () => {
    const packet = Buffer.alloc(16);
    packet.writeInt32BE(16, 0);
    packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    packet.writeInt32BE(processID, 8);
    packet.writeInt32BE(secretKey, 12);
    socket.end(packet);
  });
}
