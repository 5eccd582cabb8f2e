import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { composeSupergraph, loadSubgraph, petstoreSdl, type Subgraph } from '../federation/supergraph.js';

// npm run supergraph -- --subgraph reviews=http://127.0.0.1:4001/graphql [--subgraph shipping=shipping.graphql@http://shipping:4002/graphql]
//                       [--petstore-url http://petstore:4000/graphql] [--out supergraph.graphql]
// Composes the petstore (its subgraph SDL from this code, as FEDERATION=true serves it) with the
// other services into the supergraph SDL a router serves (Hive Gateway, Apollo Router, Cosmo).
const usage = `Usage: npm run supergraph -- --subgraph NAME=URL|NAME=FILE@URL [--subgraph ...] [--petstore-url URL] [--out FILE]
  --subgraph      another service: its GraphQL endpoint (the SDL is read from its { _service { sdl } }),
                  or a file of its subgraph SDL and, after @, the endpoint the router is to call
                  (petstore=... replaces the petstore's SDL from this code)
  --petstore-url  where the router reaches this gateway (default http://127.0.0.1:4000/graphql)
  --out           the supergraph SDL file to write (default supergraph.graphql)`;

try {
  const { values } = parseArgs({
    options: {
      subgraph: { type: 'string', multiple: true, default: [] },
      'petstore-url': { type: 'string', default: 'http://127.0.0.1:4000/graphql' },
      out: { type: 'string', default: 'supergraph.graphql' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const others = await Promise.all(values.subgraph.map((argument) => loadSubgraph(argument)));
  const names = others.map((subgraph) => subgraph.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice) throw new Error(`--subgraph ${twice} is given twice.`);
  const subgraphs: Subgraph[] = names.includes('petstore')
    ? others
    : [{ name: 'petstore', sdl: petstoreSdl(), url: values['petstore-url'] }, ...others];
  if (subgraphs.length < 2) throw new Error('Name at least one other service with --subgraph.');

  const composed = composeSupergraph(subgraphs);
  if (!composed.ok) {
    console.error(`The supergraph of ${subgraphs.map((subgraph) => subgraph.name).join(', ')} does not compose (${composed.errors.length} error${composed.errors.length === 1 ? '' : 's'}):`);
    for (const error of composed.errors) console.error(`  - ${error}`);
    console.error('Nothing was written.');
    process.exit(1);
  }
  const out = path.resolve(values.out);
  await writeFile(out, composed.supergraphSdl);
  console.log(
    `Composed ${subgraphs.map((subgraph) => `${subgraph.name} (${subgraph.url})`).join(', ')} into ${values.out}.`,
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  console.error(usage);
  process.exit(1);
}
