import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../support/gateway.js';
import { testSecret } from '../support/tokens.js';
import { bearer, expectRefusal, postGraphQL } from '../support/http.js';

/**
 * Claims a token must get right beyond its signature: `sub` a non-empty
 * string, `exp`/`nbf`/`iat` finite numbers (JSON can write 1e400, which parses
 * as Infinity and would never expire), and with an identity provider's key
 * set, a `kid` naming one of its keys.
 */

const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** An HS256 token over the payload exactly as written (JSON text), signed with the test key. */
function rawToken(payloadJson: string): string {
  const signed = `${base64url('{"alg":"HS256","typ":"JWT"}')}.${base64url(payloadJson)}`;
  return `${signed}.${createHmac('sha256', Buffer.from(testSecret)).update(signed).digest('base64url')}`;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
const gateway = useTestGateway();

describe('claims of HS256 tokens', () => {
  it('accepts a well-formed token written by hand (the check below is not the signing)', async () => {
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(rawToken(`{"sub":"ok","exp":${inAnHour()}}`)));
    expect(answer.status).toBe(200);
  });

  it.each([
    ['a numeric sub', `{"sub":123,"exp":${inAnHour()}}`],
    ['an empty sub', `{"sub":"","exp":${inAnHour()}}`],
    ['a blank sub', `{"sub":"  ","exp":${inAnHour()}}`],
    ['an exp of 1e400 (Infinity)', '{"sub":"x","exp":1e400}'],
    ['an nbf of 1e400', `{"sub":"x","exp":${inAnHour()},"nbf":1e400}`],
    ['an iat that is text', `{"sub":"x","exp":${inAnHour()},"iat":"yesterday"}`],
  ])('refuses %s with 401 UNAUTHENTICATED', async (_case, payload) => {
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(rawToken(payload)));
    expectRefusal(answer, 'UNAUTHENTICATED', 401);
  });
});

let jwksServer: Server;
let jwksUrl = '';
let signingKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  signingKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'the-key', alg: 'ES256', use: 'sig' };
  jwksServer = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
});

const provider = useTestGateway({
  tokenKeys: () => ({ kind: 'jwks', url: jwksUrl, issuer: 'https://id.test/', audience: 'petstore' }),
});

const providerToken = (kid: string | undefined) =>
  new SignJWT({ scope: '' })
    .setProtectedHeader(kid === undefined ? { alg: 'ES256' } : { alg: 'ES256', kid })
    .setIssuer('https://id.test/')
    .setAudience('petstore')
    .setSubject('someone')
    .setExpirationTime('5m')
    .sign(signingKey);

describe('kid with an identity provider key set', () => {
  it('accepts a token naming a key of the set', async () => {
    const answer = await postGraphQL(provider.baseUrl, { query: '{ __typename }' }, bearer(await providerToken('the-key')));
    expect(answer.status).toBe(200);
  });

  it.each([
    ['no kid', undefined],
    ['a kid the set does not have', 'another-key'],
  ])('refuses a token with %s, even signed by the set’s only key', async (_case, kid) => {
    const answer = await postGraphQL(provider.baseUrl, { query: '{ __typename }' }, bearer(await providerToken(kid)));
    expectRefusal(answer, 'UNAUTHENTICATED', 401);
  });
});
