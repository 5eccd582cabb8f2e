import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { bearer, expectRefusal, postGraphQL } from '../support/http.js';

/**
 * REQUEST_TIMEOUT_MS bounds the whole request, the guards before GraphQL and
 * REST included: here an identity provider whose key set never answers
 * (jose alone would wait 5 s for it).
 */

const LIMIT_MS = 500;
let silentProvider: Server;
let jwksUrl = '';
const held: ServerResponse[] = [];

beforeAll(async () => {
  silentProvider = createServer((_request, response) => {
    held.push(response);
  });
  await new Promise<void>((resolve) => silentProvider.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(silentProvider.address() as AddressInfo).port}/.well-known/jwks.json`;
});

afterAll(async () => {
  for (const response of held) response.destroy();
  await new Promise<void>((resolve) => silentProvider.close(() => resolve()));
});

const gateway = useTestGateway({
  limits: { requestTimeoutMs: LIMIT_MS },
  tokenKeys: () => ({ kind: 'jwks', url: jwksUrl, issuer: 'https://id.test/', audience: 'petstore' }),
});

describe('the request time limit', () => {
  it('answers 503 TIMEOUT at the limit while the identity provider does not answer', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ scope: 'orders:read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'some-key' })
      .setIssuer('https://id.test/')
      .setAudience('petstore')
      .setSubject('someone')
      .setExpirationTime('5m')
      .sign(privateKey);
    const startedAt = performance.now();
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(token));
    const tookMs = performance.now() - startedAt;
    expectRefusal(answer, 'TIMEOUT', 503);
    // A bound with a generous margin, well below the 5 s jose would wait on its own.
    expect(tookMs).toBeLessThan(LIMIT_MS + 2_500);
  });
});
