import path from 'node:path';
import { z } from 'zod';

/**
 * Every setting the gateway reads, validated once at start-up. A bad value
 * stops the process with one line per setting naming what it accepts.
 */
const flag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { error: `${name} must be true or false` })
    .transform((value) => value === 'true' || value === '1');

const port = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a whole number from 0 to 65535` })
    .int({ error: `${name} must be a whole number from 0 to 65535` })
    .min(0, { error: `${name} must be a whole number from 0 to 65535` })
    .max(65535, { error: `${name} must be a whole number from 0 to 65535` });

const postgresUrl = (name: string) =>
  z.string().refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), {
    error: `${name} must be a PostgreSQL connection URL (postgresql://user@host:5432/database)`,
  });

const isoDate = (name: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${name} must be a date written YYYY-MM-DD` })
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), {
      error: `${name} must be a real calendar date (YYYY-MM-DD)`,
    });

const environmentSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'], { error: 'NODE_ENV must be development, test or production' })
    .default('development'),
  HOST: z.string().min(1, { error: 'HOST must be a host name or address to listen on' }).default('127.0.0.1'),
  PORT: port('PORT').default(4000),
  DATABASE_URL: postgresUrl('DATABASE_URL').optional(),
  DATABASE_POOL_SIZE: z.coerce
    .number({ error: 'DATABASE_POOL_SIZE must be a whole number from 1 to 100' })
    .int({ error: 'DATABASE_POOL_SIZE must be a whole number from 1 to 100' })
    .min(1, { error: 'DATABASE_POOL_SIZE must be a whole number from 1 to 100' })
    .max(100, { error: 'DATABASE_POOL_SIZE must be a whole number from 1 to 100' })
    .optional(),
  MIGRATE_ON_START: flag('MIGRATE_ON_START').optional(),
  DATA_DIR: z.string().min(1, { error: 'DATA_DIR must be a folder path' }).default('.data'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  GRAPHIQL: flag('GRAPHIQL').optional(),
  LEGACY_SUNSET_DATE: isoDate('LEGACY_SUNSET_DATE').default('2027-06-30'),
});

export interface Config {
  nodeEnv: 'development' | 'test' | 'production';
  host: string;
  port: number;
  /** undefined: run the embedded PostgreSQL (PGlite) kept in `dataDir`. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  migrateOnStart: boolean;
  dataDir: string;
  logLevel: string;
  graphiql: boolean;
  /** When the legacy single-pet lookup goes away, shared by GraphQL and REST. */
  legacySunsetDate: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the settings from `env` (process.env by default). Throws ConfigError listing every bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env, flags: string[] = []): Config {
  // An empty variable is treated as unset, as shells and compose files often leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => issue.message));
  }
  const settings = parsed.data;
  const embedded = settings.DATABASE_URL === undefined;
  return {
    nodeEnv: settings.NODE_ENV,
    host: settings.HOST,
    port: settings.PORT,
    databaseUrl: settings.DATABASE_URL,
    // PGlite runs one query at a time; more connections would only queue.
    databasePoolSize: settings.DATABASE_POOL_SIZE ?? (embedded ? 1 : 10),
    // The embedded database is ours to keep current; a real server is migrated on request.
    migrateOnStart: flags.includes('--migrate') || (settings.MIGRATE_ON_START ?? embedded),
    dataDir: path.resolve(settings.DATA_DIR),
    logLevel: settings.LOG_LEVEL,
    graphiql: settings.GRAPHIQL ?? settings.NODE_ENV !== 'production',
    legacySunsetDate: settings.LEGACY_SUNSET_DATE,
  };
}
