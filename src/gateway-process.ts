import type { Server } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import { tokenKeys } from './auth/keys.js';
import { createTokenVerifier, DEV_SECRET_FILE } from './auth/tokens.js';
import { type Config, redisOptions } from './config.js';
import { EmbeddedDatabaseInUseError } from './database/embedded.js';
import { type Databases, DatabaseStartError, openDatabases } from './database/open.js';
import { createEventBus } from './events/bus.js';
import { checkReadiness } from './observability/health.js';
import { createMetrics, watchDatabases } from './observability/metrics.js';
import { outageLog } from './observability/outages.js';
import { watchRedis } from './observability/redis-health.js';
import type { Logger } from './logger.js';
import type { RunningTracing } from './observability/tracing/start.js';
import { seedDemoData } from './seed/demo-data.js';
import { createGateway } from './server.js';

/**
 * npm start, once main.ts has read the settings and started tracing: brings up the database (embedded
 * unless DATABASE_URL is set), migrates and seeds where that is ours to do, serves.
 */
export async function runGateway(config: Config, logger: Logger, startedAt: number, tracing: RunningTracing | undefined): Promise<void> {

  /** Start-up cannot go on: one clear line for people, one JSON line for the log, exit code 1. */
  function cannotStart(reason: string, error?: unknown): never {
    logger.fatal({ err: error }, `cannot start: ${reason}`);
    console.error(`Cannot start the gateway: ${reason}`);
    process.exit(1);
  }

  const metrics = createMetrics();
  const databaseOutage = outageLog(logger, 'database', 'requests are answered 503 UNAVAILABLE with Retry-After meanwhile');
  let databases: Databases;
  try {
    databases = await openDatabases(config, logger, {
      onConnect: () => databaseOutage.recovered(),
      onCancel: () => metrics.statementsCancelled.inc(),
      countRead: (server) => metrics.databaseReads.inc({ server }),
    });
  } catch (error) {
    if (error instanceof DatabaseStartError || error instanceof EmbeddedDatabaseInUseError) cannotStart(error.message, error);
    throw error;
  }
  watchDatabases(metrics, databases, config.prismaQueryPlanCacheMaxEntries);
  const { prisma } = databases.primary;
  const { embedded, readRouting } = databases;

  // The embedded database gets the demo data once: on its first start, or on the
  // first start after `npm run db:migrate` created it (a real server never).
  if (embedded && !embedded.demoDataLoaded) {
    const seeded = await seedDemoData(prisma);
    await embedded.markDemoDataLoaded();
    logger.info(seeded, 'demo data loaded');
  }

  const verifyToken = createTokenVerifier(await tokenKeys(config.auth, config.dataDir), {
    clientClaim: config.metrics.clientClaim,
    cacheMaxEntries: config.tokenCacheMaxEntries,
    caches: metrics.caches,
  });
  const redis = config.redisUrl ? new Redis(config.redisUrl, redisOptions(config.redisTimeouts)) : undefined;
  // Outages are logged by watchRedis, once; this keeps ioredis from writing each error to the console.
  redis?.on('error', () => undefined);
  // Commands fail at once while Redis is away (no offline queue), so give it its connect timeout to
  // be there before the first request; a Redis that is not is logged, and the gateway starts degraded.
  if (redis) {
    await Promise.race([
      new Promise((resolve) => redis.once('ready', resolve)),
      delay(config.redisTimeouts.connectTimeoutMs),
    ]);
  }
  const redisHealth = redis
    ? watchRedis(redis, logger, [
        'rate limits are counted per instance',
        'subscribers hear only the writes of their own instance',
      'live queries are refreshed only by the writes of their own instance (all run again when Redis is back)',
        ...(config.responseCache ? ['queries are answered without the response cache, and writes outdate only the answers this instance keeps'] : []),
      ])
    : undefined;

  const events = createEventBus(config.redisUrl, {
    channelPrefix: config.eventsChannelPrefix,
    logger,
    // Subscribing must wait for a Redis that is reconnecting; publishing fails at once.
    redisOptions: redisOptions(config.redisTimeouts, { queueWhileAway: true }),
    // watchRedis logs an outage once, with all it costs.
    reportOutages: false,
  });

  const gateway = createGateway({
    settings: config,
    prisma,
    readRouting,
    logger,
    events,
    metrics,
    verifyToken,
    redis,
    databaseOutage,
    redisHealth,
  });

  const server = serve({ fetch: gateway.app.fetch, hostname: config.host, port: config.port }, async (address) => {
    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/graphql`;
    // What an operator needs to know at once: where the data is, whether it can be served, what is exposed.
    const readiness = await checkReadiness(prisma);
    const started = {
      url,
      database: databases.address,
      ...(databases.replicas.length > 0 ? { replicas: databases.replicas.map((replica) => replica.name) } : {}),
      graphiql: config.graphiql,
      introspection: config.introspection,
      federation: config.federation,
      startupMs: Math.round(performance.now() - startedAt),
    };
    if (readiness.ready) logger.info(started, 'gateway ready');
    else logger.warn({ ...started, reason: readiness.reason }, 'gateway listening, but not ready: /readyz answers 503');
    console.log(
      `Petstore GraphQL gateway ready at ${url}${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''}`,
    );
    if (!readiness.ready) console.error(`Not ready to serve yet: ${readiness.reason}`);
    if (config.auth.kind === 'development') {
      console.log(
        `Tokens are checked with the development key made for this data folder (${path.join(config.dataDir, DEV_SECRET_FILE)}).\n` +
          'Reads of the catalogue are public. For orders and writes, mint a development token:\n' +
          '  npm run token -- --scope orders:read --scope orders:write --scope catalog:write --scope inventory:write\n' +
          'and send it as "Authorization: Bearer <token>" (in GraphiQL: the Headers tab).',
      );
    }
  });

  // A port already taken, or one this user may not open: say so and stop, rather than run on unreachable.
  const listenFailure = (port: number) => (error: NodeJS.ErrnoException) => {
    const reason =
      error.code === 'EADDRINUSE'
        ? `port ${port} on ${config.host} is already in use`
        : error.code === 'EACCES'
          ? `no permission to listen on port ${port} on ${config.host}`
          : `cannot listen on ${config.host}:${port} (${error.message})`;
    cannotStart(reason, error);
  };
  server.once('error', listenFailure(config.port));
  // Node closes an idle keep-alive connection after this; its header timeout must stay longer.
  (server as Server).keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  (server as Server).headersTimeout = Math.max((server as Server).headersTimeout, config.httpKeepAliveTimeoutMs + 1_000);

  const webSockets = gateway.serveWebSockets(server as Server);

  // /metrics on a port of its own (METRICS_PORT), for a scraper on a network clients do not reach.
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : serve({ fetch: gateway.metricsApp.fetch, hostname: config.host, port: config.metrics.port }, (address) =>
          logger.info({ port: address.port }, 'metrics served on their own port'),
        ).once('error', listenFailure(config.metrics.port));

  /**
   * SIGTERM / SIGINT: stop taking new work (the listener closes, /readyz says
   * 503, answers carry `Connection: close`), end every subscription properly
   * (SSE streams send `complete` and end; WebSocket operations get `complete`,
   * then their sockets close with 1001), let accepted requests finish, then
   * release the database, Redis and the embedded server and exit 0.
   * Whatever is still open when SHUTDOWN_GRACE_MS is over is cut, and the exit
   * code is then 1. A second signal exits at once with 1.
   */
  let stopping = false;
  const KEEP_ALIVE_DRAIN_MS = 1_000;

  async function shutdown(signal: string) {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    const http = server as Server;
    let cut = false;
    const grace = setTimeout(() => {
      cut = true;
      logger.warn('grace period over; closing the remaining connections');
      webSockets.terminate();
      http.closeAllConnections();
    }, config.shutdownGraceMs);
    gateway.stopAccepting();
    // /readyz now answers 503; until the load balancer has seen it (SHUTDOWN_DRAIN_MS) the listener
    // stays open, so requests already on their way, in the accept backlog too, are answered.
    if (config.shutdownDrainMs > 0) {
      logger.info({ drainMs: config.shutdownDrainMs }, 'draining: still listening while load balancers stop routing');
      await delay(config.shutdownDrainMs);
    }
    // The listener closes on the next turn of the event loop, so that connections already
    // waiting in its backlog are accepted (and answered) rather than reset with it. Not with
    // http.Server.close(), which would also drop every idle keep-alive connection at once: a
    // request a proxy is sending on one at that moment (or still unread in its buffer) would
    // be lost, and nginx answers that with 502 without retrying a POST. Instead every answer
    // from now on carries `Connection: close`, and idle connections are closed once the
    // subscriptions have ended and a proxy has had a moment to stop using them.
    await new Promise((resolve) => setImmediate(resolve));
    const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(http, () => resolve()));
  gateway.endLiveQueries();
    await events.close();
    await webSockets.close();
    await Promise.race([closed, delay(Math.min(KEEP_ALIVE_DRAIN_MS, config.shutdownGraceMs / 2))]);
    http.closeIdleConnections();
    metricsServer?.close();
    await closed;
    clearTimeout(grace);
    // A request cut above may still be waiting on the database: its connection is not waited for long.
    await databases.close();
    redisHealth?.stop();
    redis?.disconnect();
    logger.info({ cut }, cut ? 'stopped; requests still running at the end of the grace period were cut' : 'stopped');
    // The spans of the last requests go out before the process does (bounded by OTEL_BSP_EXPORT_TIMEOUT).
    await tracing?.shutdown().catch(() => undefined);
    process.exit(cut ? 1 : 0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
