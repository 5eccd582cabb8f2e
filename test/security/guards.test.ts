import { beforeAll, describe, expect, it } from 'vitest';
import { testToken, useTestGateway } from '../support/gateway.js';

/**
 * The guards every request passes before GraphQL or REST: the body limit and
 * the rate limit, as a client sees them on the wire.
 */
const bodyBytes = 4_096;
const rateLimit = { requests: 5, windowSeconds: 60 };
const gateway = useTestGateway({ limits: { bodyBytes, rateLimit } });

const query = '{ __typename }';
const padded = (bytes: number) => JSON.stringify({ query, variables: { padding: 'x'.repeat(bytes) } });

/** A body sent chunked: no Content-Length, so the gateway must count it as it arrives. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 1_000) controller.enqueue(bytes.subarray(at, at + 1_000));
      controller.close();
    },
  });
}

/** Each test counts against its own client (the token's subject), so the rate limit stays out of the way. */
async function post(body: BodyInit, subject: string, extra: RequestInit = {}) {
  const response = await fetch(`${gateway.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await testToken([], subject)}` },
    body,
    ...extra,
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, unknown> };
}

describe('the body limit', () => {
  it('refuses a body whose Content-Length is over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const answer = await post(padded(bodyBytes), 'body-1');
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(answer.json.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }),
    ]);
  });

  it('answers a body within the limit', async () => {
    const answer = await post(padded(bodyBytes - 200), 'body-2');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: { __typename: 'Query' } });
  });

  it('counts a chunked body as it arrives: over the limit is refused, within it is answered', async () => {
    const over = await post(chunked(padded(bodyBytes)), 'body-3', { duplex: 'half' } as RequestInit);
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const within = await post(chunked(padded(1_000)), 'body-3', { duplex: 'half' } as RequestInit);
    expect(within.status).toBe(200);
    expect(within.json).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('the rate limit', () => {
  let token: string;
  beforeAll(async () => {
    token = await testToken([], 'rate-1');
  });

  it('tells every answer, GraphQL and REST, what is left, and refuses the request over the limit with 429', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < rateLimit.requests; i++) {
      const response =
        i % 2 === 0
          ? await fetch(`${gateway.baseUrl}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify({ query }),
            })
          : await fetch(`${gateway.baseUrl}/pets/1`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      expect(response.headers.get('ratelimit-policy')).toBe(`${rateLimit.requests};w=${rateLimit.windowSeconds}`);
      remaining.push(/remaining=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1] ?? '?');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refused = await fetch(`${gateway.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/remaining=0/);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });
});
