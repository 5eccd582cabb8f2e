import type { PrismaClient } from '../database/client.js';
import { pendingMigrations } from '../migrations/migrations.js';

export type Readiness = { ready: true } | { ready: false; reason: string };

/** How long the database may take to answer the readiness check before it counts as not answering. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * Ready when the database answers and every migration in prisma/migrations
 * has been applied: a gateway on an older schema must not take traffic. A
 * database that does not answer within `timeoutMs` (a host that drops
 * packets, a pool with every connection stuck) is not ready either.
 */
export async function checkReadiness(prisma: PrismaClient, timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  let applied: string[];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  try {
    const rows = await Promise.race([
      prisma.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      late,
    ]);
    if (rows === 'late') return { ready: false, reason: `The database did not answer within ${timeoutMs} ms.` };
    applied = rows.map((row) => row.migration_name);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/_prisma_migrations/.test(message) && /does not exist/.test(message)) {
      return { ready: false, reason: 'The database has no migrations applied: run npm run db:migrate.' };
    }
    return { ready: false, reason: 'The database does not answer.' };
  } finally {
    clearTimeout(timer);
  }
  const pending = await pendingMigrations(applied);
  if (pending.length > 0) {
    return { ready: false, reason: `Migrations not applied yet: ${pending.join(', ')}. Run npm run db:migrate.` };
  }
  return { ready: true };
}
