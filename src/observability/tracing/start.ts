import { createRequire } from 'node:module';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import type { TracingSettings } from '../../config.js';
import type { Logger } from '../../logger.js';

/** What main needs of the SDK once it runs: exporting what is still queued before the process exits. */
export interface RunningTracing {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK when the OTEL_* settings ask for traces (src/config.ts validated them):
 * the exporter, its protocol, headers, batching, the sampler and the resource are the SDK's own reading of
 * those variables. It must run before the modules it instruments are loaded (pg, ioredis, node:http), which
 * is why main.ts starts it and only then imports the gateway. Off, nothing of the SDK is even loaded, and the
 * spans the gateway starts itself go to the API's no-op tracer.
 */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<RunningTracing | undefined> {
  if (!settings.enabled) return undefined;
  const [{ startNodeSDK }, { HttpInstrumentation }, { UndiciInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { PrismaInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-undici'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@prisma/instrumentation'),
    ]);
  const sdk = startNodeSDK({
    // Until the JSON logger takes over below: nothing below a warning on the console.
    logLevel: 'warn',
    // Traces only: metrics are Prometheus' (/metrics) and logs are pino's JSON lines.
    metricReaders: [],
    logRecordProcessors: [],
    ...(settings.defaultServiceName ? { resourceAttributes: { 'service.name': settings.defaultServiceName } } : {}),
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not requests anyone traces; they would drown the rest.
        ignoreIncomingRequestHook: (request) => /^\/(healthz|readyz|metrics)\b/.test(request.url ?? ''),
        // Only what the gateway calls (the identity provider's keys) starts a client span, not the SDK's own export.
        requireParentforOutgoingSpans: true,
      }),
      // fetch (undici): the JWKS fetch of jose carries traceparent to the identity provider.
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // Statement text only, never the values bound to it; no spans for pool.connect.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
      // The command's name alone: keys name clients (rate limits) and EVAL's arguments would be kept otherwise.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      new PrismaInstrumentation(),
    ],
  });
  // The SDK's own complaints (a collector that is down, a full queue) as JSON log lines, warnings and worse.
  const log = (level: 'error' | 'warn' | 'debug') => (message: string, ...args: unknown[]) => logger[level]({ otel: args.map(String) }, message);
  diag.disable();
  diag.setLogger({ error: log('error'), warn: log('warn'), info: log('debug'), debug: log('debug'), verbose: log('debug') }, DiagLogLevel.WARN);
  // The instrumentations patch a package when it is require()d. Imported from ESM, ioredis' entry is
  // loaded without require() and would stay unpatched; required here first, every later import gets
  // this same, patched module from the CommonJS cache.
  const require = createRequire(import.meta.url);
  for (const name of INSTRUMENTED_PACKAGES) require(name);
  return sdk;
}

/** The CommonJS packages whose calls become spans: PostgreSQL's client and Redis'. */
const INSTRUMENTED_PACKAGES = ['pg', 'ioredis'];
