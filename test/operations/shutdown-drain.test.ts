import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { stopAll } from '../support/processes.js';

/**
 * SIGTERM under load, with SHUTDOWN_DRAIN_MS: /readyz answers 503 at once,
 * the listener stays open for the drain, and every request that was sent
 * (the ones still waiting in the accept backlog too) gets an HTTP answer,
 * never a reset.
 */

afterAll(async () => {
  stopAll();
  await cleanUp();
});

const LOAD = 400;
const DRAIN_MS = 3_000;

/** A request on a connection of its own: its status, or the network error that ended it. */
function getOnNewConnection(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('SIGTERM with requests in the accept backlog', () => {
  it('answers every request that was sent, and /readyz says 503 during the drain', { timeout: 90_000 }, async () => {
    const database = await migratedDatabase();
    const gateway = await startProcess(database.url, {
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      SHUTDOWN_GRACE_MS: '20000',
      LOG_LEVEL: 'warn',
    });
    const base = gateway.baseUrl;
    const outcomes = Promise.all(
      Array.from({ length: LOAD }, () => getOnNewConnection(`${base}/graphql?query=%7B__typename%7D`)),
    );
    const stopped = gateway.stop('SIGTERM', 40_000);

    const answers = await outcomes;
    const byOutcome = new Map<number | string, number>();
    for (const outcome of answers) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    // Every one answered over HTTP: its result (200), none reset or refused.
    expect(Object.fromEntries(byOutcome)).toEqual({ 200: LOAD });

    // Still within the drain: the listener answers, and says it is not ready.
    const readiness = await fetch(`${base}/readyz`);
    expect(readiness.status).toBe(503);
    expect(readiness.headers.get('connection')).toBe('close');

    expect(await stopped).toEqual({ code: 0, signal: null });
  });
});
