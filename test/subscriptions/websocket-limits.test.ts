import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { connectWebSocket } from '../support/subscriptions.js';

/**
 * Over a WebSocket, an operation refused by a query limit gets its own
 * GraphQL error (the same VALIDATION_FAILED naming the setting as over HTTP),
 * and the connection lives on for the next operation.
 */

const gateway = useTestGateway({ limits: { maxAliases: 20, maxDepth: 4, maxCost: 500, maxDirectives: 3 } });

const aliases = (count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`;

const overLimits: Array<[string, string]> = [
  ['MAX_ALIASES', aliases(21)],
  ['MAX_DEPTH', '{ pets { edges { node { category { pets { edges { node { name } } } } } } } }'],
  ['MAX_COST', '{ pets(first: 100) { edges { node { name category { name } inventory { quantity } orders { totalCount } } } } }'],
  ['MAX_DIRECTIVES', '{ __typename @skip(if: false) @skip(if: false) @skip(if: false) @skip(if: false) }'],
];

describe('query limits over WebSocket', () => {
  it.each(overLimits)('answers an operation over %s with VALIDATION_FAILED and keeps the connection', async (limit, query) => {
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`);
    try {
      const refused = connection.subscribe(query);
      const ending = await refused.ended;
      expect(ending.kind).toBe('error');
      const errors = (ending as { errors: unknown }).errors as Array<{ message: string; extensions?: Record<string, unknown> }>;
      // The cost limit has a code of its own; armor's limits are VALIDATION_FAILED.
      expect(errors[0]?.extensions).toMatchObject({ code: limit === 'MAX_COST' ? 'COST_LIMIT_EXCEEDED' : 'VALIDATION_FAILED', status: 400, limit });
      expect(errors[0]?.message).toContain(`the limit is the setting ${limit}`);
      // The same connection still serves the next operation.
      const next = connection.subscribe('{ __typename }');
      expect(await next.next()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await connection.dispose();
    }
  });

  it('answers an operation whose page-size variables take it over MAX_COST with that error in its result', async () => {
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`);
    try {
      const refused = connection.subscribe('query Page($n: Int) { pets(first: $n) { edges { node { name category { name } inventory { quantity } orders { totalCount } } } } }', {
        n: 100,
      });
      const result = await refused.next();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', status: 400, limit: 'MAX_COST', cost: { estimated: 1001, max: 500 } });
      expect(await refused.ended).toEqual({ kind: 'complete' });
      const next = connection.subscribe('{ __typename }');
      expect(await next.next()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await connection.dispose();
    }
  });
});
