import { serve } from '@hono/node-server';
import { ConfigError, loadConfig } from './config.js';
import { createPrismaClient } from './db.js';
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

const prisma = createPrismaClient({ url: databaseUrl, poolSize: config.databasePoolSize });
if (embedded?.created) {
  const seeded = await seedDemoData(prisma);
  logger.info(seeded, 'demo data loaded');
}

const { app } = createGateway({
  prisma,
  logger,
  graphiql: config.graphiql,
  legacySunsetDate: config.legacySunsetDate,
});

const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, (address) => {
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/graphql`;
  logger.info({ url, startupMs: Math.round(performance.now() - startedAt) }, 'gateway ready');
  console.log(
    `Petstore GraphQL gateway ready at ${url}${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''}`,
  );
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await prisma.$disconnect();
  await embedded?.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
