import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';

/**
 * GraphQL over GET with parameters the gateway cannot read is the client's
 * mistake: 400 VALIDATION_FAILED in the documented shape, never a masked
 * INTERNAL error.
 */

const gateway = useTestGateway();

async function get(search: string) {
  const response = await fetch(`${gateway.baseUrl}/graphql?${search}`, {
    headers: { accept: 'application/graphql-response+json' },
  });
  return { status: response.status, body: (await response.json()) as { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> } };
}

describe('GET /graphql with unreadable parameters', () => {
  it.each([
    ['variables that are not JSON', `query=${encodeURIComponent('query ($id: ID!) { pet(id: $id) { name } }')}&variables=%7Bnot`],
    ['extensions that are not JSON', `query=${encodeURIComponent('{ __typename }')}&extensions=%7Bnot`],
  ])('answers 400 VALIDATION_FAILED for %s', async (_case, search) => {
    const answer = await get(search);
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(answer.body.errors?.[0]?.message).toMatch(/JSON/);
  });
});
