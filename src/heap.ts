import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full
 * collection: 50% (a factor of 1.5). V8's own choice under a high allocation
 * rate is up to 4, which let a busy gateway's resident memory reach twice the
 * 300 MB target while most of the heap was garbage waiting to be collected.
 * At 100% the bench's load pass still peaked at 319 MB, the old generation
 * twice its ~45 MB of live objects; at 50% the same sequence of reads and
 * placeOrder (c = 10 and 50, run twice each way, alternating) peaked at
 * 245-254 MB instead of 275-280, with the same CPU per request within the
 * runs' noise. Imported first by main.ts, so it applies before the gateway
 * starts allocating; a --heap-growing-percent given to node (on the command
 * line or in NODE_OPTIONS) wins.
 */
const FLAG = '--heap-growing-percent';
const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) =>
  arg.replaceAll('_', '-').startsWith(FLAG),
);
if (!given) v8.setFlagsFromString(`${FLAG}=50`);

// The young generation can only be sized on node's command line, before the heap exists: production
// runs `node --max-semi-space-size=16` (package.json's start:prod, the Dockerfile, the bench). Node 24
// picks 32 MB or more on a large machine; at 16 the pets page kept its throughput and CPU per request,
// and peak RSS fell from 361 to 272 MB (c = 10, measured side by side).
