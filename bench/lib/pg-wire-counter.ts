import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that reads the wire protocol both ways
 * and counts what a server sends to the database: one statement per
 * CommandComplete (or ErrorResponse) the database answers, and the rows
 * (DataRow messages) it returns. It counts the same for any client library
 * (Prisma's pg adapter, PostGraphile's pg adaptor), simple or extended
 * protocol, named or unnamed prepared statements, and BEGIN/COMMIT too (as
 * pg_stat_statements does with track_utility on).
 *
 * It costs a userland hop per message, so the benchmark only uses it in its
 * counting pass (sequential requests), never under load.
 */
export interface StatementRecord {
  connection: number;
  sql: string;
  /** The CommandComplete tag (SELECT 50, INSERT 0 1, BEGIN, ...) or ERROR. */
  tag: string;
  rows: number;
}

export interface WireCounts {
  /** Every statement the database completed (or refused). */
  statements: number;
  /** The same, without transaction control and session settings (BEGIN, COMMIT, SET, ...). */
  dataStatements: number;
  /** Rows the database sent back. */
  rows: number;
}

const CONTROL = new Set([
  'BEGIN',
  'START',
  'COMMIT',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
  'SET',
  'RESET',
  'SHOW',
  'DISCARD',
  'DEALLOCATE',
]);

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Splits a byte stream into PostgreSQL messages: type byte + int32 length, or untyped (startup) ones. */
class MessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  /** Messages still to read without a type byte (the startup packet and its kin). */
  untyped = 0;
  /** Single bytes still to read raw (the server's answer to SSLRequest / GSSENCRequest). */
  rawBytes = 0;
  opaque = false;

  constructor(private readonly onMessage: (type: string, body: Buffer) => void) {}

  push(chunk: Buffer): void {
    if (this.opaque) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.rawBytes > 0) {
        if (this.buffer.length < 1) return;
        const answer = String.fromCharCode(this.buffer[0] ?? 0);
        this.buffer = this.buffer.subarray(1);
        this.rawBytes--;
        // An accepted encryption request turns the rest of the stream into ciphertext.
        if (answer === 'S' || answer === 'G') {
          this.opaque = true;
          return;
        }
        continue;
      }
      if (this.untyped > 0) {
        if (this.buffer.length < 4) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const body = this.buffer.subarray(4, length);
        this.buffer = this.buffer.subarray(length);
        this.untyped--;
        this.onMessage('', body);
        continue;
      }
      if (this.buffer.length < 5) return;
      const length = this.buffer.readInt32BE(1);
      if (this.buffer.length < 1 + length) return;
      const type = String.fromCharCode(this.buffer[0] ?? 0);
      const body = this.buffer.subarray(5, 1 + length);
      this.buffer = this.buffer.subarray(1 + length);
      this.onMessage(type, body);
    }
  }
}

function cString(body: Buffer, start: number): [string, number] {
  const end = body.indexOf(0, start);
  const stop = end === -1 ? body.length : end;
  return [body.toString('utf8', start, stop), stop + 1];
}

export class PgWireCounter {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private connections = 0;
  private counts: WireCounts = { statements: 0, dataStatements: 0, rows: 0 };
  private recording: StatementRecord[] | undefined;
  /** Connections whose traffic could not be read (encrypted). */
  opaqueConnections = 0;

  constructor(private readonly upstream: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  listen(host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, host, () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  snapshot(): WireCounts {
    return { ...this.counts };
  }

  /** Keeps every statement from now on, with its SQL, until stopRecording(). */
  startRecording(): void {
    this.recording = [];
  }

  stopRecording(): StatementRecord[] {
    const recorded = this.recording ?? [];
    this.recording = undefined;
    return recorded;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const connection = ++this.connections;
    const database = net.connect(this.upstream.port, this.upstream.host);
    this.sockets.add(client);
    this.sockets.add(database);
    client.setNoDelay(true);
    database.setNoDelay(true);

    const statementsByName = new Map<string, string>();
    const portals = new Map<string, string>();
    // Statements sent and not yet answered; a simple query stays until ReadyForQuery.
    const pending: Array<{ sql: string; simple: boolean }> = [];
    let rows = 0;

    const fromServer = new MessageReader((type, body) => {
      switch (type) {
        case 'D':
          rows++;
          this.counts.rows++;
          break;
        case 'C':
        case 'E': {
          const tag = type === 'C' ? cString(body, 0)[0] : 'ERROR';
          const head = pending[0];
          this.counts.statements++;
          if (!CONTROL.has(tag.split(' ')[0] ?? '')) this.counts.dataStatements++;
          this.recording?.push({ connection, sql: head?.sql ?? '?', tag, rows });
          rows = 0;
          if (head && !head.simple) pending.shift();
          break;
        }
        case 'Z':
          pending.length = 0;
          rows = 0;
          break;
      }
    });
    const fromClient = new MessageReader((type, body) => {
      switch (type) {
        case '': {
          const code = body.readInt32BE(0);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            fromClient.untyped++;
            fromServer.rawBytes++;
          }
          break;
        }
        case 'Q':
          pending.push({ sql: cString(body, 0)[0], simple: true });
          break;
        case 'P': {
          const [name, next] = cString(body, 0);
          statementsByName.set(name, cString(body, next)[0]);
          break;
        }
        case 'B': {
          const [portal, next] = cString(body, 0);
          portals.set(portal, statementsByName.get(cString(body, next)[0]) ?? '?');
          break;
        }
        case 'E':
          pending.push({ sql: portals.get(cString(body, 0)[0]) ?? '?', simple: false });
          break;
      }
    });
    fromClient.untyped = 1;

    client.on('data', (chunk: Buffer) => {
      fromClient.push(chunk);
      database.write(chunk);
    });
    database.on('data', (chunk: Buffer) => {
      fromServer.push(chunk);
      client.write(chunk);
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (fromClient.opaque || fromServer.opaque) this.opaqueConnections++;
      client.destroy();
      database.destroy();
      this.sockets.delete(client);
      this.sockets.delete(database);
    };
    client.on('close', finish);
    database.on('close', finish);
    client.on('error', finish);
    database.on('error', finish);
  }
}
