import net from 'node:net';

/**
 * A TCP proxy on a free loopback port in front of another server (PostgreSQL,
 * Redis), to inject the faults real networks produce:
 *
 * - `pass`: forwards both ways;
 * - `refuse`: new connections are closed at once (as a server that is down);
 * - `freeze`: new connections are accepted and never answered, and open ones
 *   stop forwarding in both directions without closing (a host that went
 *   silent: no FIN, no RST); what was sent meanwhile arrives once it passes;
 * - `hold-answers`: what clients send goes through, but the server's answers wait
 *   (a slow way back) until the proxy passes again: a command has run by the time
 *   its sender hears of it;
 * - `cut()`: destroys every open connection (a reset), whatever the mode.
 */
export type FaultMode = 'pass' | 'refuse' | 'freeze' | 'hold-answers';

export interface FaultProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  set(mode: FaultMode): void;
  cut(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Where the server sees the open connections come from (`host:port`, as Redis' MONITOR names a client). */
  sources(): Set<string>;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let mode: FaultMode = 'pass';
  let accepted = 0;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();

  const server = net.createServer((client) => {
    accepted++;
    client.on('error', () => undefined);
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    const pair = { client, upstream };
    pairs.add(pair);
    const forget = () => pairs.delete(pair);
    client.on('close', () => {
      forget();
      upstream.destroy();
    });
    upstream.on('close', () => {
      forget();
      client.destroy();
    });
    // Piped both ways; frozen, neither side is read, so nothing moves (as over a silent network,
    // TCP loses no byte: what was sent arrives once the proxy passes again).
    client.pipe(upstream);
    upstream.pipe(client);
    if (mode === 'freeze') client.pause();
    if (mode === 'freeze' || mode === 'hold-answers') upstream.pause();
  });
  const cut = () => {
    for (const { client, upstream } of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    set(next) {
      mode = next;
      for (const { client, upstream } of pairs) {
        if (next === 'freeze') client.pause();
        else client.resume();
        if (next === 'freeze' || next === 'hold-answers') upstream.pause();
        else upstream.resume();
      }
    },
    cut,
    get accepted() {
      return accepted;
    },
    sources: () => new Set([...pairs].map(({ upstream }) => `${upstream.localAddress}:${upstream.localPort}`)),
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
