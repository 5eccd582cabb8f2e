import { ConfigError, loadConfig } from '../config.js';
import { EmbeddedDatabaseInUseError, startEmbeddedPostgres } from '../database/embedded.js';
import { applyPendingMigrations } from '../migrations/migrations.js';

// npm run db:migrate: applies pending migrations to DATABASE_URL (or to the
// embedded database in DATA_DIR), recording them as `prisma migrate deploy` does.
try {
  const config = loadConfig();
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
  const applied = await applyPendingMigrations(config.databaseUrl ?? (embedded?.url as string));
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
  await embedded?.stop();
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof EmbeddedDatabaseInUseError ? error.message : error);
  process.exit(1);
}
