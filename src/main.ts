// First, so that it applies before anything else allocates.
import './heap.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { currentTraceIds } from './observability/tracing/spans.js';
import { startTracing } from './observability/tracing/start.js';

// npm start: reads the settings, starts tracing when they ask for it, then loads and runs the gateway.
const startedAt = performance.now();
let config: Config;
try {
  config = loadConfig(process.env, process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
// The SDK instruments pg, ioredis and node:http as they are loaded: the gateway's modules are imported
// only once it runs (a static import would have loaded them all before this line).
const logger = createLogger(config.logLevel, { traceIds: currentTraceIds });
const tracing = await startTracing(config.tracing, logger);
const { runGateway } = await import('./gateway-process.js');
await runGateway(config, logger, startedAt, tracing);
