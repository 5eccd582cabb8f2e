import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is one PostgreSQL session in this process. This server lets several
 * wire-protocol connections (a pg pool, the migrator, a test's own client)
 * share it as if each had a session of its own, as far as the protocol lets
 * a client tell:
 *
 * - A connection holds the session from its first message until PostgreSQL
 *   says the session is idle again (ReadyForQuery `I`): a whole
 *   Parse/Bind/Execute/Sync exchange, or a whole transaction, runs before
 *   another connection's message. (`@electric-sql/pglite-socket` schedules
 *   single messages, so two connections' exchanges interleave and one binds
 *   the other's unnamed statement: electric-sql/pglite#1046.)
 * - Prepared statement and portal names are the connection's own: each
 *   connection's names are prefixed on the way in, and the statements it
 *   prepared are closed when it goes. (Without this, a connection opened
 *   after another closed met the statements that one had prepared, and
 *   PostgreSQL refused to prepare them again: 42P05.)
 * - A connection that goes mid-exchange or mid-transaction has its exchange
 *   ended and its transaction rolled back before anyone else runs.
 * - PGlite throwing (a packet it cannot read) ends that connection only.
 *
 * What cannot be given: PGlite runs a statement to its end on this thread, so
 * there is no statement timeout and no cancelling, and a CancelRequest is
 * answered by closing its connection.
 */
export interface EmbeddedSessionServer {
  /** host:port of the listener. */
  address: string;
  /** Wire connections open now. */
  connections(): number;
  stop(): Promise<void>;
}

export interface EmbeddedSessionOptions {
  /** A connection that sends nothing for this long is closed, as PostgreSQL's idle_session_timeout does (0: never). */
  idleTimeoutMs?: number;
  /** Connections beyond this are refused with PostgreSQL's own "too many clients" error. */
  maxConnections?: number;
}

const PROTOCOL_3 = 196_608;
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const CANCEL_REQUEST = 80_877_102;

interface Connection {
  readonly id: number;
  readonly socket: net.Socket;
  /** Bytes received and not yet cut into messages. */
  buffer: Buffer;
  started: boolean;
  /** Whole messages waiting for the session, in order. */
  pending: Buffer[];
  /** Statement names (as PGlite knows them) this connection prepared and has not closed. */
  statements: Set<string>;
  /** The last exchange ended with ReadyForQuery; false mid-exchange. */
  atRest: boolean;
  /** Gone, or going: nothing more of it is run. */
  closed: boolean;
  /** What it left in the session has been ended. */
  released: boolean;
  idleTimer?: NodeJS.Timeout;
}

export async function serveEmbeddedSession(
  db: PGlite,
  { idleTimeoutMs = 0, maxConnections = 100 }: EmbeddedSessionOptions = {},
): Promise<EmbeddedSessionServer> {
  const open = new Set<Connection>();
  /** Connections with work for the session, in the order they asked. */
  const waiting: Connection[] = [];
  /** The connection whose exchange or transaction the session is in, if any. */
  let owner: Connection | undefined;
  let running = false;
  let nextId = 1;

  const ask = (connection: Connection) => {
    if (!waiting.includes(connection)) waiting.push(connection);
    void pump();
  };

  async function pump() {
    if (running) return;
    running = true;
    try {
      for (;;) {
        // The session's holder goes first; else whoever asked first.
        const next = owner ?? waiting.find((connection) => connection.pending.length > 0 || connection.closed);
        if (!next) break;
        if (next.closed) await release(next);
        else if (next.pending.length > 0) await runPending(next);
        // The holder is mid-exchange or mid-transaction and has sent nothing more yet: everyone waits.
        else break;
        const index = waiting.indexOf(next);
        if (owner !== next && next.pending.length === 0 && index >= 0) waiting.splice(index, 1);
      }
    } finally {
      running = false;
    }
  }

  /** Runs what the connection sent, as one exchange with PGlite, and keeps the session for it while it is not at rest. */
  async function runPending(connection: Connection) {
    const messages = connection.pending.splice(0);
    const terminate = messages.findIndex((message) => message[0] === 0x58 /* X */);
    const sent = (terminate >= 0 ? messages.slice(0, terminate) : messages).map((message) => ownNames(connection, message));
    owner = connection;
    if (sent.length > 0) {
      const scan = readyScanner();
      try {
        await db.runExclusive(() =>
          db.execProtocolRawStream(Buffer.concat(sent), {
            onRawData: (data) => {
              scan(data);
              if (!connection.closed) connection.socket.write(data);
            },
          }),
        );
      } catch {
        // PGlite could not take it: this connection ends; the session goes on.
        connection.socket.destroy();
        connection.closed = true;
      }
      // No ReadyForQuery: mid-exchange (a Parse before its Sync); `T`/`E`: inside a transaction.
      connection.atRest = scan.status() === 'I';
    }
    if (terminate >= 0) {
      connection.socket.end();
      connection.closed = true;
    }
    if (connection.closed) await release(connection);
    else if (connection.atRest) owner = undefined;
  }

  /** Ends what a gone connection left in the session (an exchange, a transaction, its statements), then frees the session. */
  async function release(connection: Connection) {
    if (connection.released) return;
    connection.released = true;
    const leftOver = !connection.atRest || connection.statements.size > 0 || owner === connection;
    owner = connection;
    if (leftOver) {
      try {
        await db.runExclusive(async () => {
          const discard = { onRawData: () => undefined };
          if (!connection.atRest) await db.execProtocolRawStream(sync(), discard);
          if (db.isInTransaction()) await db.execProtocolRawStream(simpleQuery('ROLLBACK'), discard);
          if (connection.statements.size > 0) {
            const closes = [...connection.statements].map((name) => closeStatement(name));
            await db.execProtocolRawStream(Buffer.concat([...closes, sync()]), discard);
          }
        });
      } catch {
        // A session PGlite refuses to clean: the next exchange will hear about it from PGlite itself.
      }
    }
    connection.statements.clear();
    connection.atRest = true;
    owner = undefined;
    const index = waiting.indexOf(connection);
    if (index >= 0) waiting.splice(index, 1);
  }

  /** The connection's statement and portal names, made its own. */
  function ownNames(connection: Connection, message: Buffer): Buffer {
    const type = message[0];
    const prefix = `c${connection.id}_`;
    const own = (name: string) => (name === '' ? '' : `${prefix}${name}`);
    switch (type) {
      case 0x50 /* P: Parse */: {
        const [name, end] = cString(message, 5);
        if (name === '') return message;
        connection.statements.add(own(name));
        return withStrings(message, [own(name)], end);
      }
      case 0x42 /* B: Bind */: {
        const [portal, afterPortal] = cString(message, 5);
        const [statement, end] = cString(message, afterPortal);
        if (portal === '' && statement === '') return message;
        return withStrings(message, [own(portal), own(statement)], end);
      }
      case 0x44 /* D: Describe */:
      case 0x43 /* C: Close */: {
        const kind = message[5];
        const [name, end] = cString(message, 6);
        if (name === '') return message;
        if (type === 0x43 && kind === 0x53 /* S */) connection.statements.delete(own(name));
        return withStrings(message, [own(name)], end, 6);
      }
      case 0x45 /* E: Execute */: {
        const [portal, end] = cString(message, 5);
        if (portal === '') return message;
        return withStrings(message, [own(portal)], end);
      }
      default:
        return message;
    }
  }

  function receive(connection: Connection, data: Buffer) {
    connection.buffer = connection.buffer.length === 0 ? data : Buffer.concat([connection.buffer, data]);
    for (;;) {
      const { buffer } = connection;
      if (!connection.started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        connection.buffer = buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          connection.socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST || code !== PROTOCOL_3) {
          connection.socket.destroy();
          return;
        }
        connection.started = true;
        connection.pending.push(buffer.subarray(0, length));
        continue;
      }
      if (buffer.length < 5) break;
      const length = buffer.readInt32BE(1) + 1;
      if (buffer.length < length) break;
      connection.pending.push(buffer.subarray(0, length));
      connection.buffer = buffer.subarray(length);
    }
    if (connection.pending.length > 0) ask(connection);
  }

  const server = net.createServer((socket) => {
    if (open.size >= maxConnections) {
      socket.end(fatal('53300', 'sorry, too many clients already'));
      return;
    }
    socket.setNoDelay(true);
    const connection: Connection = {
      id: nextId++,
      socket,
      buffer: Buffer.alloc(0),
      started: false,
      pending: [],
      statements: new Set(),
      atRest: true,
      closed: false,
      released: false,
    };
    open.add(connection);
    const idle = () => {
      if (idleTimeoutMs <= 0) return;
      clearTimeout(connection.idleTimer);
      connection.idleTimer = setTimeout(() => {
        // As PostgreSQL's idle_session_timeout: never inside a transaction or an exchange.
        if (owner === connection || connection.pending.length > 0) return idle();
        socket.end(fatal('57P05', 'terminating connection due to idle-session timeout'));
      }, idleTimeoutMs);
      connection.idleTimer.unref();
    };
    idle();
    socket.on('data', (data) => {
      idle();
      receive(connection, data);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearTimeout(connection.idleTimer);
      open.delete(connection);
      connection.closed = true;
      connection.pending.length = 0;
      // What it prepared or left open is ended as soon as the session is free.
      if (!connection.released) ask(connection);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    connections: () => open.size,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of open) connection.socket.destroy();
      await closed;
      // Whatever the last connections left is ended before the database closes.
      while (running || waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    },
  };
}

/** Follows the backend messages of one exchange and remembers the status of its last ReadyForQuery. */
function readyScanner() {
  let status: string | undefined;
  // Bytes still to skip in the current message; a message header (type and length) cut across chunks.
  let skip = 0;
  let header = Buffer.alloc(0);
  const scan = (data: Uint8Array) => {
    let at = 0;
    while (at < data.length) {
      if (skip > 0) {
        const taken = Math.min(skip, data.length - at);
        skip -= taken;
        at += taken;
        continue;
      }
      if (header.length < 5) {
        const piece = Buffer.from(data.subarray(at, at + 5 - header.length));
        header = header.length === 0 ? piece : Buffer.concat([header, piece]);
        at += piece.length;
        if (header.length < 5) continue;
      }
      const length = header.readInt32BE(1);
      if (header[0] === 0x5a /* Z: ReadyForQuery, one status byte */) {
        if (at >= data.length) continue;
        status = String.fromCharCode(data[at]!);
        at += 1;
        skip = length - 5;
      } else {
        skip = length - 4;
      }
      header = Buffer.alloc(0);
    }
  };
  return Object.assign(scan, { status: () => status });
}

function cString(message: Buffer, from: number): [string, number] {
  const end = message.indexOf(0, from);
  return [message.toString('utf8', from, end), end + 1];
}

/** The message with the C strings from `start` up to `end` replaced by `strings`, its length fixed. */
function withStrings(message: Buffer, strings: string[], end: number, start = 5): Buffer {
  const head = message.subarray(0, start);
  const body = Buffer.concat([head, ...strings.map((value) => Buffer.from(`${value}\0`)), message.subarray(end)]);
  body.writeInt32BE(body.length - 1, 1);
  return body;
}

function frontend(type: string, payload: Buffer): Buffer {
  const message = Buffer.alloc(5 + payload.length);
  message.write(type, 0);
  message.writeInt32BE(4 + payload.length, 1);
  payload.copy(message, 5);
  return message;
}

const sync = () => frontend('S', Buffer.alloc(0));
const simpleQuery = (sql: string) => frontend('Q', Buffer.from(`${sql}\0`));
const closeStatement = (name: string) => frontend('C', Buffer.from(`S${name}\0`));

/** A FATAL ErrorResponse, as PostgreSQL sends before it closes a connection. */
function fatal(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  return frontend('E', fields);
}
