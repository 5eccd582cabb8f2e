import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * TRUST_PROXY decides where the client's address comes from, and so which
 * rate-limit bucket an anonymous request counts against. Off (the default),
 * X-Forwarded-For is ignored: a client cannot pick its own bucket. Behind a
 * trusted proxy, each client the proxy names counts on its own, and what a
 * client wrote into the header itself before the proxy appended is ignored.
 */

const limits = { rateLimit: { requests: 2, windowSeconds: 60 } };
const direct = useTestGateway({ limits });
const oneHop = useTestGateway({ limits, trustProxy: 1 });
const byAddress = useTestGateway({ limits, trustProxy: ['127.0.0.2'] });

/** The status of an anonymous POST /graphql sent from `localAddress` with the given X-Forwarded-For. */
function statusFrom(baseUrl: string, forwardedFor: string | undefined, localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
    const request = httpRequest(`${baseUrl}/graphql`, { method: 'POST', localAddress, headers }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(JSON.stringify({ query: '{ __typename }' }));
  });
}

const statuses = async (baseUrl: string, forwardedFor: string | undefined, times: number, localAddress?: string) => {
  const seen: number[] = [];
  for (let i = 0; i < times; i++) seen.push(await statusFrom(baseUrl, forwardedFor, localAddress));
  return seen;
};

describe('TRUST_PROXY', () => {
  it('is off by default: X-Forwarded-For does not change the bucket, so clients cannot escape the limit', async () => {
    expect(await statuses(direct.baseUrl, '203.0.113.1', 2)).toEqual([200, 200]);
    expect(await statuses(direct.baseUrl, '203.0.113.2', 1)).toEqual([429]);
  });

  it('with one trusted hop, each client named by the proxy has its own bucket', async () => {
    expect(await statuses(oneHop.baseUrl, '203.0.113.1', 3)).toEqual([200, 200, 429]);
    // Another client behind the same proxy is not locked out by the first.
    expect(await statuses(oneHop.baseUrl, '203.0.113.2', 2)).toEqual([200, 200]);
  });

  it('ignores what a client wrote into X-Forwarded-For before the trusted proxy appended its address', async () => {
    // The proxy appends the real client (203.0.113.9); the spoofed addresses in front change nothing.
    expect(await statuses(oneHop.baseUrl, '198.51.100.1, 203.0.113.9', 1)).toEqual([200]);
    expect(await statuses(oneHop.baseUrl, '198.51.100.2, 203.0.113.9', 1)).toEqual([200]);
    expect(await statuses(oneHop.baseUrl, '198.51.100.3, 203.0.113.9', 1)).toEqual([429]);
  });

  it('with a list of proxy addresses, believes only those proxies', async () => {
    // From the trusted proxy (127.0.0.2), the named clients count apart.
    expect(await statuses(byAddress.baseUrl, '203.0.113.5', 2, '127.0.0.2')).toEqual([200, 200]);
    expect(await statuses(byAddress.baseUrl, '203.0.113.6', 2, '127.0.0.2')).toEqual([200, 200]);
    // From anywhere else the header is the client's own word: its socket address is its bucket.
    expect(await statuses(byAddress.baseUrl, '203.0.113.7', 2, '127.0.0.3')).toEqual([200, 200]);
    expect(await statuses(byAddress.baseUrl, '203.0.113.8', 1, '127.0.0.3')).toEqual([429]);
  });

  it('is validated at start-up with a message naming what it accepts', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(() => loadConfig({ TRUST_PROXY: 'the load balancer' })).toThrow(/TRUST_PROXY must be false, true, a number/);
  });
});
