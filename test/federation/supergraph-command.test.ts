import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReviewsSubgraph, reviewsSdl, startReviewsSubgraph } from '../support/federation.js';
import { freePort, npmRun, stopAll } from '../support/processes.js';

/**
 * `npm run supergraph`, run as a developer runs it: the petstore's subgraph
 * SDL from the code, composed with other services named by a URL (their SDL
 * read from `_service`) or an SDL file, into the supergraph file a router
 * serves; a supergraph that does not compose is refused with each error.
 */

let scratch: string;
let reviews: ReviewsSubgraph;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'petstore-supergraph-'));
  await writeFile(path.join(scratch, 'reviews.graphql'), reviewsSdl);
  reviews = await startReviewsSubgraph([]);
});

afterAll(async () => {
  stopAll();
  await reviews?.close();
  await rm(scratch, { recursive: true, force: true });
});

const supergraph = (args: string[]) => npmRun('supergraph', args, {}, 90_000);

describe('npm run supergraph', () => {
  it('composes the petstore with a service given as an SDL file and the URL the router is to call', async () => {
    const out = path.join(scratch, 'from-file.graphql');
    const run = await supergraph([
      '--subgraph',
      `reviews=${path.join(scratch, 'reviews.graphql')}@http://reviews.internal:4001/graphql`,
      '--petstore-url',
      'http://petstore.internal:4000/graphql',
      '--out',
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `Composed petstore (http://petstore.internal:4000/graphql), reviews (http://reviews.internal:4001/graphql) into ${out}.`,
    );
    const sdl = await readFile(out, 'utf8');
    expect(sdl).toContain('PETSTORE @join__graph(name: "petstore", url: "http://petstore.internal:4000/graphql")');
    expect(sdl).toContain('REVIEWS @join__graph(name: "reviews", url: "http://reviews.internal:4001/graphql")');
    // Pet is an entity of both, by the same key; its reviews come from the reviews service.
    expect(sdl).toMatch(/type Pet implements Node @join__type\(graph: PETSTORE, key: "id"\) @join__type\(graph: REVIEWS, key: "id"\) @join__implements\(graph: PETSTORE, interface: "Node"\)/);
    expect(sdl).toMatch(/reviews: \[Review!\]! @join__field\(graph: REVIEWS\)/);
    expect(sdl).toMatch(/type InventoryItem implements Node @join__type\(graph: PETSTORE, key: "petId"\)/);
    // A schema a router can load.
    expect(() => buildSchema(sdl, { assumeValidSDL: true })).not.toThrow();
  });

  it('reads a running service’s SDL from its _service { sdl }, routing to the same URL', async () => {
    const out = path.join(scratch, 'from-url.graphql');
    const run = await supergraph(['--subgraph', `reviews=${reviews.url}`, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const sdl = await readFile(out, 'utf8');
    expect(sdl).toContain(`REVIEWS @join__graph(name: "reviews", url: "${reviews.url}")`);
    expect(sdl).toContain('PETSTORE @join__graph(name: "petstore", url: "http://127.0.0.1:4000/graphql")');
  });

  it('prints each composition error with its code, writes nothing and exits 1', async () => {
    // Another service resolving a pet's name too, without @shareable on either side.
    const clashing = reviewsSdl.replace('reviews: [Review!]!', 'reviews: [Review!]!\n    name: String!');
    await writeFile(path.join(scratch, 'clashing.graphql'), clashing);
    const out = path.join(scratch, 'not-written.graphql');
    const run = await supergraph(['--subgraph', `reviews=${path.join(scratch, 'clashing.graphql')}@http://reviews:4001/graphql`, '--out', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The supergraph of petstore, reviews does not compose (1 error):');
    expect(run.stderr).toMatch(/ {2}- \[INVALID_FIELD_SHARING\] Non-shareable field "Pet\.name" is resolved from multiple subgraphs: it is resolved from subgraphs "petstore" and "reviews"/);
    expect(run.stderr).toContain('Nothing was written.');
    await expect(access(out)).rejects.toThrow();
  });

  it('says which source it could not use', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/graphql`;
    const unreachable = await supergraph(['--subgraph', `reviews=${closed}`, '--out', path.join(scratch, 'x.graphql')]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`--subgraph reviews: ${closed} cannot be reached`);

    const noUrl = await supergraph(['--subgraph', `reviews=${path.join(scratch, 'reviews.graphql')}`]);
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain('is neither a URL nor FILE@URL (an SDL file needs the URL the router is to use)');

    const alone = await supergraph([]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('Name at least one other service with --subgraph.');
  });
});
