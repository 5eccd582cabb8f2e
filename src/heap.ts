import v8 from 'node:v8';

const givenToNode = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map((arg) => arg.replaceAll('_', '-'));
/** Whether node was started with this V8 flag (or its `--no-` form): a flag given to node wins over ours. */
const given = (flag: string) => givenToNode.some((arg) => arg.startsWith(`--${flag}`) || arg.startsWith(`--no-${flag}`));

/**
 * How far V8 lets the old generation grow past what survived the last full
 * collection: 50% (a factor of 1.5). V8's own choice under a high allocation
 * rate is up to 4, which let a busy gateway's resident memory reach twice the
 * 300 MB target while most of the heap was garbage waiting to be collected.
 * At 100% the bench's load pass still peaked at 319 MB, the old generation
 * twice its ~45 MB of live objects; at 50% the same sequence of reads and
 * placeOrder (c = 10 and 50, run twice each way, alternating) peaked at
 * 245-254 MB instead of 275-280, with the same CPU per request within the
 * runs' noise.
 */
if (!given('heap-growing-percent')) v8.setFlagsFromString('--heap-growing-percent=50');

/**
 * No allocation-site pretenuring. V8 allocates straight into the old generation from a site
 * whose objects it once found mostly alive at a young collection; under load it decides so for
 * the rows pg builds from each answer (a page's rows are all alive while the page is read,
 * shaped and written). Those rows live a few milliseconds: in the old generation they are
 * garbage only a full collection takes, and while they live, every young collection scans
 * their references to the young strings in them: frequent full collections, slower young
 * ones, and a slower tail (docs/performance.md, "Garbage").
 */
if (!given('allocation-site-pretenuring')) v8.setFlagsFromString('--no-allocation-site-pretenuring');

// Imported first by main.ts, so that both apply before the gateway starts allocating.
//
// The young generation can only be sized on node's command line, before the heap exists: production
// runs `node --max-semi-space-size=16` (package.json's start:prod, the Dockerfile, the bench). Node 24
// picks 32 MB or more on a large machine; at 16 the pets page kept its throughput and CPU per request,
// and peak RSS fell from 361 to 272 MB (c = 10, measured side by side).
