import type { PrismaClient } from '../db.js';
import { pendingMigrations } from '../migrations/migrations.js';

export type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * Ready when the database answers and every migration in prisma/migrations
 * has been applied: a gateway on an older schema must not take traffic.
 */
export async function checkReadiness(prisma: PrismaClient): Promise<Readiness> {
  let applied: string[];
  try {
    const rows = await prisma.$queryRaw<{ migration_name: string }[]>`
      SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
    applied = rows.map((row) => row.migration_name);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/_prisma_migrations/.test(message) && /does not exist/.test(message)) {
      return { ready: false, reason: 'The database has no migrations applied: run npm run db:migrate.' };
    }
    return { ready: false, reason: 'The database does not answer.' };
  }
  const pending = await pendingMigrations(applied);
  if (pending.length > 0) {
    return { ready: false, reason: `Migrations not applied yet: ${pending.join(', ')}. Run npm run db:migrate.` };
  }
  return { ready: true };
}
