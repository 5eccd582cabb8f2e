// PostGraphile 5 over the benchmark database, as the benchmark's reference peer.
//
// Run with the Node 22 installed here (PostGraphile 5 needs Node >= 22):
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/<db> PORT=5678 \
//     NODE_ENV=production node_modules/.bin/node postgraphile-server.mjs
//
// Library mode with the Amber preset and grafserv's Node adaptor, set up for
// production as PostGraphile's documentation does it: no GraphiQL (Ruru), no
// watch mode, no `explain` in responses. Everything else is Amber's default.
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) {
  console.error('DATABASE_URL is required');
  process.exit(1);
}
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 5678);
// The same pool size as the gateway's (DATABASE_POOL_SIZE, 10 by default).
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString, schemas: ['public'], poolConfig: { max: poolSize } })],
  grafserv: { host, port, graphqlPath: '/graphql', graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on('error', (error) => {
  console.error(error);
  process.exit(1);
});
await serv.addTo(server);
// Build the schema (introspection) before saying we are ready.
await pgl.getSchema();
server.listen(port, host, () => {
  const address = server.address();
  console.log(`PostGraphile ready at http://${address.address}:${address.port}/graphql`);
});

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections?.();
  // Releases the grafserv instance it created too, and the pg pool.
  await pgl.release();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
