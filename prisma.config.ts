import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (`prisma generate`, and `prisma migrate deploy` where
// Prisma's native engine is available). The gateway itself reads DATABASE_URL
// through src/config.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
});
