import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  DriverAdapterError,
  mockMigrationAwareAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import * as runtime from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';

/**
 * Prisma's schema engine, compiled to WebAssembly, talking to PostgreSQL
 * through the same driver adapter as the gateway. Prisma's CLI would download
 * a native binary for this, which cannot be had on every machine we run on;
 * the WebAssembly build is the same engine, published by Prisma at the version
 * that matches our `prisma` package.
 *
 * The package's own entry imports the .wasm file as an ES module, which Node
 * does not support, so the module is instantiated here by hand.
 */
let started: Promise<void> | undefined;

// Node's WebAssembly global, typed as far as we use it (@types/node 20 has no WebAssembly types).
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
};

// The engine reports a Rust panic through this global before it throws; keep
// the message so the thrown error can say what went wrong.
let lastPanic: string | undefined;
(globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown }).PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message: string) {
    lastPanic = message;
  },
};

/**
 * The glue as the engine's import object, except that the engine's timers do
 * not keep Node running. The engine races its work against timeouts (10 s) and
 * never clears them; with the glue's plain setTimeout every command left a
 * process alive for 10 s after its work was done (`npm run db:migrate` took
 * 10.5 s to exit after a 0.2 s migration).
 */
function engineImports(): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...runtime };
  for (const [name, value] of Object.entries(runtime)) {
    if (!name.startsWith('__wbg_setTimeout_') || typeof value !== 'function') continue;
    const setEngineTimeout = value as (callback: () => void, ms: number) => unknown;
    imports[name] = (callback: () => void, ms: number) => {
      const timer = setEngineTimeout(callback, ms);
      (timer as { unref?: () => void }).unref?.();
      return timer;
    };
  }
  return imports;
}

function startRuntime(): Promise<void> {
  started ??= (async () => {
    // The package exports its JavaScript glue but not the .wasm beside it.
    const glue = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(path.join(path.dirname(glue), 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': engineImports() });
    const exports = instance.exports as { __wbindgen_start(): void };
    runtime.__wbg_set_wasm(exports);
    exports.__wbindgen_start();
  })();
  return started;
}

/**
 * An adapter for work that needs no database (diffing two schema texts). The
 * engine still asks the server for its version when it starts; this answers
 * that one question as a PostgreSQL 15 server would and refuses everything else,
 * so a diff that ever tried to touch a database would fail loudly.
 */
function offlinePostgresAdapter(): SqlMigrationAwareDriverAdapterFactory {
  const mock = mockMigrationAwareAdapterFactory('postgres');
  const answerVersionProbe = async () => {
    const adapter = await mock.connect();
    const refuse = adapter.queryRaw.bind(adapter);
    adapter.queryRaw = (query) =>
      query.sql.includes('server_version_num')
        ? Promise.resolve({
            columnNames: ['exists', 'version', 'numeric_version'],
            columnTypes: [ColumnTypeEnum.Boolean, ColumnTypeEnum.Text, ColumnTypeEnum.Int32],
            rows: [[true, 'PostgreSQL 15', 150000]],
          })
        : refuse(query);
    return adapter;
  };
  return { ...mock, connect: answerVersionProbe, connectToShadowDb: answerVersionProbe };
}

/**
 * The PostgreSQL adapter, except that a migration script runs as one
 * multi-statement query, as Prisma's native engine runs it. The adapter's own
 * executeScript splits the script at every `;` (breaking semicolons in
 * comments, strings and function bodies) and runs the pieces outside any
 * transaction; one query runs in PostgreSQL's implicit transaction, so a failing
 * migration leaves nothing half-applied.
 *
 * The engine never disposes the adapter it was given (freeing the engine does
 * not), so `close` ends the pool: without it an idle connection would keep the
 * process alive for pg's idle timeout (10 s) and keep the database busy, which
 * blocks `CREATE DATABASE … TEMPLATE` and `DROP DATABASE` on it meanwhile.
 */
function postgresAdapter(databaseUrl: string): {
  factory: SqlMigrationAwareDriverAdapterFactory;
  close(): Promise<void>;
} {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  let ended: Promise<void> | undefined;
  const close = () => {
    ended ??= pool.end();
    return ended;
  };
  const factory = new PrismaPg(pool);
  return {
    close,
    factory: {
      provider: factory.provider,
      adapterName: factory.adapterName,
      connectToShadowDb: () => factory.connectToShadowDb(),
      async connect() {
        const adapter = await factory.connect();
        adapter.executeScript = async (script) => {
          try {
            await pool.query(script);
          } catch (error) {
            const e = error as pg.DatabaseError;
            throw new DriverAdapterError({
              kind: 'postgres',
              code: e.code ?? 'unknown',
              severity: e.severity ?? 'ERROR',
              message: e.message,
              detail: e.detail,
              column: e.column,
              hint: e.hint,
            });
          }
        };
        const dispose = adapter.dispose.bind(adapter);
        adapter.dispose = async () => {
          await dispose();
          await close();
        };
        return adapter;
      },
    },
  };
}

export interface EngineOptions {
  /** PostgreSQL connection string; omit for offline work (diffing two schema texts). */
  databaseUrl?: string;
  /** The Prisma schema the engine works with, as (path, content) pairs. */
  schemas?: Array<[string, string]>;
}

/** Runs `work` with a schema engine and frees the engine afterwards. */
export async function withSchemaEngine<T>(
  options: EngineOptions,
  work: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  await startRuntime();
  const online = options.databaseUrl ? postgresAdapter(options.databaseUrl) : undefined;
  const factory = online?.factory ?? offlinePostgresAdapter();
  const ignoreEngineLogs = () => {};
  lastPanic = undefined;
  try {
    const engine = await runtime.SchemaEngine.new(
      { datamodels: options.schemas ?? [] },
      ignoreEngineLogs,
      bindMigrationAwareSqlAdapterFactory(factory),
    );
    try {
      return await work(engine);
    } finally {
      engine.free();
    }
  } catch (error) {
    if (lastPanic) throw new Error(`Prisma schema engine panicked: ${lastPanic}`, { cause: error });
    throw error;
  } finally {
    await online?.close();
  }
}
export const noSchemaFilter = { externalTables: [], externalEnums: [] };
