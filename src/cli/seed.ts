import { ConfigError, loadConfig } from '../config.js';
import { createPrismaClient } from '../database/client.js';
import { EmbeddedDatabaseInUseError, startEmbeddedPostgres } from '../database/embedded.js';
import { applyPendingMigrations } from '../migrations/migrations.js';
import { seedDemoData } from '../seed/demo-data.js';

// npm run db:seed: loads the demo catalogue into DATABASE_URL (or the embedded
// database); running it again adds nothing. Like npm start, it first migrates
// the database when that is ours to do (the embedded one, or MIGRATE_ON_START),
// so a fresh DATA_DIR can be seeded before the first start.
try {
  const config = loadConfig(process.env, process.argv.slice(2));
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
  const url = config.databaseUrl ?? (embedded?.url as string);
  if (config.migrateOnStart) await applyPendingMigrations(url);
  const prisma = createPrismaClient({ url, poolSize: 1 });
  const { categoriesCreated, petsCreated } = await seedDemoData(prisma);
  await embedded?.markDemoDataLoaded();
  console.log(`Demo data: ${categoriesCreated} categories and ${petsCreated} pets added.`);
  await prisma.$disconnect();
  await embedded?.stop();
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof EmbeddedDatabaseInUseError ? error.message : error);
  process.exit(1);
}
