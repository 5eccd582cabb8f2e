import { type AuditResult, serverAudits } from 'graphql-http';
import { describe, expect, it } from 'vitest';
import { type TestGateway, useTestGateway } from '../support/gateway.js';

/**
 * graphql-http's server audits, the reference check of the GraphQL-over-HTTP specification, run
 * against /graphql over real HTTP: straight to GraphQL, and through the response cache, which reads
 * the body itself before GraphQL sees it.
 *
 * Every audit passes, the MAY ones too: none is excused. The four MAY audits that used to report a
 * notice (6C00–6C03: an `operationName` that is an object, a number, a boolean or an array was run
 * as if it were absent) pass since such requests are refused with 400 (useRequestChecks).
 */

const direct = useTestGateway();
const cached = useTestGateway({
  responseCache: { ttlMs: 60_000, maxEntries: 100, maxBytes: 1_000_000, keyPrefix: 'over-http-audit:' },
});

async function audit(gateway: TestGateway): Promise<AuditResult[]> {
  const results: AuditResult[] = [];
  // One at a time, as a client would send them; the audits are independent of each other.
  for (const { fn } of serverAudits({ url: () => `${gateway.baseUrl}/graphql` })) results.push(await fn());
  return results;
}

const describeFailure = (result: AuditResult) =>
  `${result.id} ${result.name}: ${result.status}${result.status === 'ok' ? '' : `, ${result.reason}`}`;

describe.each([
  ['straight to GraphQL', direct],
  ['through the response cache', cached],
])('the GraphQL-over-HTTP audits, %s', (_path, gateway) => {
  it('pass, every MUST, SHOULD and MAY', async () => {
    const results = await audit(gateway);
    expect(results.length).toBeGreaterThan(50);
    expect(results.filter((result) => result.status !== 'ok').map(describeFailure)).toEqual([]);
  });
});
