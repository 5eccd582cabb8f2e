import { createMigration } from '../migrations/migrations.js';

// npm run db:migration -- <name>: writes prisma/migrations/<timestamp>_<name>/
// for the changes made to prisma/schema.prisma since the newest migration.
const name = process.argv[2];
if (!name) {
  console.error('Usage: npm run db:migration -- <name>   (lowercase letters, digits and underscores)');
  process.exit(2);
}
try {
  const created = await createMigration(name);
  if (created) {
    console.log(`Wrote prisma/migrations/${created.name}/migration.sql:\n\n${created.sql}`);
    console.log('Review it (add CHECK constraints or data changes by hand), then run npm run db:migrate.');
  } else {
    console.log('prisma/schema.prisma has not changed since the newest migration: nothing to write.');
  }
} catch (error) {
  // A bad name or a missing snapshot is a message for the developer, not a stack trace.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
