import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { gatewayNodeArgs, levelsFromTen, log, only, resultsDir, root, settings, warnings } from './config.js';
import { drive, cell } from './matrix.js';
import { type Operation, operations, type Variant } from './operations.js';
import { BackendCpu, freePort, memoryMb, type ServerProcess, startServer } from './processes.js';
import type { LadderResult, LadderRung } from './report.js';
import { send, startGateway, startPostGraphile } from './servers.js';

/**
 * The ladder pass: the five reads the gateway is judged by, and every write, answered by less and less
 * machinery (bench/ladder/server.ts), by the gateway with field-by-field execution only, with its plans
 * on Prisma's statements (reads), as built, and by PostGraphile, side by side at c = 10 and 50. Every
 * rung's answer to the same request is checked equal to the gateway's before it is measured (a write
 * of a row of its own each request, with its strings masked: its ids and names are new every time); a
 * rung that differs is said so.
 */

export const ladderRungs: LadderResult['rungs'] = [
  { rung: 'postgraphile', label: 'PostGraphile 5', what: 'the peer, as in the load pass', answers: 'both' },
  {
    rung: 'sql',
    label: 'one SQL statement',
    what: 'one statement building the answer\'s JSON in PostgreSQL (a write: calling the gateway\'s database function), pg on node:http',
    answers: 'both',
  },
  { rung: 'prisma-join', label: 'Prisma (join)', what: 'the project\'s Prisma client, relations by JOIN, rows shaped like the answer, node:http', answers: 'reads' },
  { rung: 'prisma-query', label: 'Prisma (query)', what: 'the same, relations by a query each', answers: 'reads' },
  {
    rung: 'domain',
    label: 'domain function',
    what: 'the project\'s domain function of the write (its rules, its one statement on the project\'s pool), answer shaped by hand, node:http',
    answers: 'writes',
  },
  { rung: 'bare-yoga', label: 'schema in bare yoga', what: 'the project\'s schema in a plain createYoga, no plugin of the project\'s', answers: 'both' },
  { rung: 'field-by-field', label: 'gateway, field by field', what: 'the gateway as built with GRAPHQL_QUERY_PLANS=false', answers: 'both' },
  {
    rung: 'prisma-plans',
    label: 'gateway, Prisma\'s SQL',
    what: 'the gateway with its query plans reading through Prisma\'s statements (GRAPHQL_PLAN_STATEMENTS=false)',
    answers: 'reads',
  },
  { rung: 'gateway', label: 'gateway as built', what: 'the gateway with its defaults (query plans on, lists read by its own statements)', answers: 'both' },
];

/** The operations of the ladder: the bench operations the rungs of bench/ladder/server.ts answer. */
const LADDER_OPERATIONS = ['1', '2', '3a', '4b', '4d', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14'];

/** Every string of an answer as one placeholder: what two writes of rows of their own have in common. */
const masked = (value: unknown): unknown => {
  if (typeof value === 'string') return '…';
  if (Array.isArray(value)) return value.map(masked);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, masked(item)]));
  return value;
};

/** The rungs that answer an operation: every rung a read, those with a write of their own a write. */
const rungsFor = (operation: Operation) =>
  ladderRungs.filter(({ answers }) => answers === 'both' || answers === (operation.gateway.write ? 'writes' : 'reads'));

async function startRung(rung: LadderRung, url: string): Promise<ServerProcess> {
  switch (rung) {
    case 'postgraphile':
      return startPostGraphile(url, 'ladder-postgraphile');
    case 'gateway':
      return startGateway(url, 'ladder-gateway', gatewayNodeArgs);
    case 'field-by-field':
      return startGateway(url, 'ladder-field-by-field', gatewayNodeArgs, { GRAPHQL_QUERY_PLANS: 'false' });
    case 'prisma-plans':
      return startGateway(url, 'ladder-prisma-plans', gatewayNodeArgs, { GRAPHQL_PLAN_STATEMENTS: 'false' });
    default: {
      const port = await freePort();
      return startServer({
        name: `ladder-${rung}`,
        command: process.execPath,
        args: ['--import', 'tsx', 'bench/ladder/server.ts', rung, String(port), url],
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' },
        url: `http://127.0.0.1:${port}`,
        logFile: path.join(resultsDir, `ladder-${rung}.log.tmp`),
      });
    }
  }
}

/** The answer's data, as compared between rungs (PostGraphile's through each side's normalize). */
async function answerOf(server: ServerProcess, variant: Variant, rung: LadderRung, gatewayVariant: Variant) {
  // The rows it writes of its own made ready first, as before a cell.
  await variant.supply?.({ requests: 1, url: server.url });
  const answer = await send(server, variant, true);
  const body = answer.json as { data?: unknown; errors?: unknown } | undefined;
  if (answer.status !== 200 || !body || body.errors) return { problem: `${answer.status} ${answer.text.slice(0, 200)}` };
  const comparable = variant.rowOfItsOwn ? masked : (value: unknown) => value;
  if (rung === 'postgraphile') return { data: comparable(variant.normalize?.(body)) };
  return { data: comparable(body.data), normalized: comparable(gatewayVariant.normalize?.(body)) };
}

export async function ladderPass(url: string, databaseName: string): Promise<LadderResult> {
  const selected = operations.filter((operation) => LADDER_OPERATIONS.includes(operation.id) && (!only || only.includes(operation.id)));
  const levels = levelsFromTen();
  log(`ladder pass: ${ladderRungs.length} rungs × ${selected.length} operations at c=${levels.join(',')}`);
  const servers = new Map<LadderRung, ServerProcess>();
  for (const { rung } of ladderRungs) servers.set(rung, await startRung(rung, url));
  const backend = new BackendCpu(databaseName);
  const result: LadderResult = { rungs: ladderRungs, operations: [], cells: [], peakRssMb: {} };

  for (const operation of selected) {
    const rungs = rungsFor(operation);
    const variantOf = (rung: LadderRung) => (rung === 'postgraphile' ? operation.postgraphile! : operation.gateway);
    // The same request to every rung; each answer checked against the gateway's.
    const reference = await answerOf(servers.get('gateway')!, operation.gateway, 'gateway', operation.gateway);
    const differs: string[] = [];
    for (const { rung } of rungs) {
      if (rung === 'gateway') continue;
      const answer = await answerOf(servers.get(rung)!, variantOf(rung), rung, operation.gateway);
      const same =
        !answer.problem &&
        !reference.problem &&
        (rung === 'postgraphile'
          ? isDeepStrictEqual(answer.data, reference.normalized)
          : isDeepStrictEqual(answer.data, reference.data));
      if (!same) differs.push(`${rung}${answer.problem ? ` (${answer.problem})` : ''}`);
    }
    if (reference.problem) differs.push(`gateway (${reference.problem})`);
    if (differs.length) warnings.push(`ladder, ${operation.id}: answers differ from the gateway's at ${differs.join(', ')}`);
    result.operations.push({ id: operation.id, title: operation.title, write: operation.gateway.write, differs });
    log(`ladder ${operation.id}: ${differs.length ? `answers differ: ${differs.join(', ')}` : 'every rung answers the same'}`);

    for (const { rung } of rungs) {
      await drive(servers.get(rung)!, variantOf(rung), levels[0]!, settings.warmupS);
    }
    for (const c of levels) {
      for (const { rung } of rungs) {
        const measured = await cell(servers.get(rung)!, variantOf(rung), c, backend);
        result.cells.push({ ...measured, operation: operation.id, rung });
        log(
          `ladder ${operation.id.padEnd(3)} ${rung.padEnd(15)} c=${String(c).padEnd(3)} ${measured.requestsPerSecond.toFixed(0).padStart(6)} req/s  ` +
            `p99 ${measured.latencyMs.p99} ms  cpu ${measured.serverCpuMsPerRequest?.toFixed(2)} ms/req  pg ${measured.postgresCpuMsPerRequest?.toFixed(2)} ms/req`,
        );
      }
    }
  }
  for (const [rung, server] of servers) {
    result.peakRssMb[rung] = memoryMb(server.pid)?.peakRss ?? null;
    await server.stop();
  }
  return result;
}
