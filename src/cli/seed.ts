import { ConfigError, loadConfig } from '../config.js';
import { createPrismaClient } from '../db.js';
import { startEmbeddedPostgres } from '../embedded-postgres.js';
import { seedDemoData } from '../seed/demo-data.js';

// npm run db:seed: loads the demo catalogue into DATABASE_URL (or the embedded
// database); running it again adds nothing.
try {
  const config = loadConfig();
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
  const prisma = createPrismaClient({ url: config.databaseUrl ?? (embedded?.url as string), poolSize: 1 });
  const { categoriesCreated, petsCreated } = await seedDemoData(prisma);
  console.log(`Demo data: ${categoriesCreated} categories and ${petsCreated} pets added.`);
  await prisma.$disconnect();
  await embedded?.stop();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
