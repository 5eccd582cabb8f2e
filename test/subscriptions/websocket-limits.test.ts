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
      expect(errors[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, limit });
      expect(errors[0]?.message).toContain(`the limit is the setting ${limit}`);
      // The same connection still serves the next operation.
      const next = connection.subscribe('{ __typename }');
      expect(await next.next()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await connection.dispose();
    }
  });

  // The cost is estimated once the variables are known, as the operation is about to run: its refusal is its result.
  it.each([
    ['written', '{ pets(first: 100) { nodes { name category { name } inventory { quantity } orders { totalCount } } } }', {}],
    ['variables', 'query Page($n: Int) { pets(first: $n) { nodes { name category { name } inventory { quantity } orders { totalCount } } } }', { n: 100 }],
  ])('answers an operation whose page sizes (%s) take it over MAX_COST with COST_LIMIT_EXCEEDED in its result', async (_how, query, variables) => {
    const connection = await connectWebSocket(`${gateway.baseUrl}/graphql`);
    try {
      const refused = connection.subscribe(query, variables);
      const result = await refused.next();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', status: 400, limit: 'MAX_COST', cost: { estimated: 901, max: 500 } });
      expect(await refused.ended).toEqual({ kind: 'complete' });
      const next = connection.subscribe('{ __typename }');
      expect(await next.next()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await connection.dispose();
    }
  });
});
