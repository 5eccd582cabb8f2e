// First, so that it applies before anything else allocates.
import './heap.js';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import { tokenKeys } from './auth/keys.js';
import { createTokenVerifier } from './auth/tokens.js';
import { ConfigError, loadConfig } from './config.js';
import { createDatabase } from './db.js';
import { createEventBus } from './events/bus.js';
import { createMetrics, watchPool } from './observability/metrics.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { createLogger } from './logger.js';
import { applyPendingMigrations } from './migrations/migrations.js';
import { seedDemoData } from './seed/demo-data.js';
import { createGateway } from './server.js';

// npm start: reads the settings, brings up the database (embedded unless
// DATABASE_URL is set), migrates and seeds where that is ours to do, serves.
const startedAt = performance.now();
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env, process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const logger = createLogger(config.logLevel);

let embedded: EmbeddedPostgres | undefined;
if (!config.databaseUrl) {
  embedded = await startEmbeddedPostgres(config.dataDir);
  logger.info({ dataDir: config.dataDir, firstStart: embedded.created }, 'embedded PostgreSQL (PGlite) started');
}
const databaseUrl = config.databaseUrl ?? (embedded as EmbeddedPostgres).url;

if (config.migrateOnStart) {
  const applied = await applyPendingMigrations(databaseUrl);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is current');
}

const { prisma, pool } = createDatabase({
  url: databaseUrl,
  poolSize: config.databasePoolSize,
  statementTimeoutMs: config.limits.statementTimeoutMs,
});
// The embedded database gets the demo data once: on its first start, or on the
// first start after `npm run db:migrate` created it (a real server never).
if (embedded && !embedded.demoDataLoaded) {
  const seeded = await seedDemoData(prisma);
  await embedded.markDemoDataLoaded();
  logger.info(seeded, 'demo data loaded');
}

const verifyToken = createTokenVerifier(await tokenKeys(config.auth, config.dataDir));
const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
redis?.on('error', (error) => logger.warn({ err: error }, 'Redis unreachable; rate limits are counted per instance'));

const events = createEventBus(config.redisUrl);
const metrics = createMetrics();
watchPool(metrics, pool);

const gateway = createGateway({
  prisma,
  logger,
  events,
  metrics,
  verifyToken,
  limits: config.limits,
  redis,
  introspection: config.introspection,
  corsOrigins: config.corsOrigins,
  graphiql: config.graphiql,
  legacySunsetDate: config.legacySunsetDate,
  legacyAfterSunset: config.legacyAfterSunset,
});

const server = serve({ fetch: gateway.app.fetch, hostname: config.host, port: config.port }, (address) => {
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/graphql`;
  logger.info({ url, startupMs: Math.round(performance.now() - startedAt) }, 'gateway ready');
  console.log(
    `Petstore GraphQL gateway ready at ${url}${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''}`,
  );
  if (config.auth.kind === 'development') {
    console.log(
      'Reads of the catalogue are public. For orders and writes, mint a development token:\n' +
        '  npm run token -- --scope orders:read --scope orders:write --scope catalog:write --scope inventory:write\n' +
        'and send it as "Authorization: Bearer <token>" (in GraphiQL: the Headers tab).',
    );
  }
});

const webSockets = gateway.serveWebSockets(server as Server);

/**
 * SIGTERM / SIGINT: stop taking new work, end subscriptions properly, let
 * accepted requests finish (within SHUTDOWN_GRACE_MS), then release the
 * database, Redis and the embedded server. A second signal exits at once.
 */
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
  gateway.stopAccepting();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  (server as Server).closeIdleConnections();
  await events.close();
  await webSockets.close();
  const grace = setTimeout(() => {
    logger.warn('grace period over; closing the remaining connections');
    (server as Server).closeAllConnections();
  }, config.shutdownGraceMs);
  await closed;
  clearTimeout(grace);
  await prisma.$disconnect();
  redis?.disconnect();
  await embedded?.stop();
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
