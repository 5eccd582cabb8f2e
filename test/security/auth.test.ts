import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, CompactSign, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../../src/auth/tokens.js';
import { DomainError } from '../../src/errors.js';
import { useTestGateway } from '../support/gateway.js';
import { testSecret, testToken } from '../support/tokens.js';
import { type Answer, bearer, expectRefusal, type GraphQLAnswer, postGraphQL, send } from '../support/http.js';
import { restClient } from '../support/rest.js';

/**
 * Authentication through HTTP: no Authorization header is anonymous and may
 * read the public catalogue; a header that is there but not a valid bearer
 * token is 401 UNAUTHENTICATED with WWW-Authenticate, on every route, even a
 * public one — never anonymous.
 */

const gateway = useTestGateway();
const rest = restClient(gateway);
let petId: string;

beforeAll(async () => {
  const category = await gateway.prisma.category.create({ data: { name: 'Dogs' } });
  const pet = await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } });
  await gateway.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: 3, status: 'available' } });
  await gateway.prisma.order.create({ data: { petId: pet.id, quantity: 1 } });
  petId = pet.id.toString();
});

const publicRead = '{ pets { totalCount } categories { totalCount } inventory { totalCount } }';

const json = (value: unknown) => base64url.encode(JSON.stringify(value));
const payloadOf = (token: string) => JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!)));

/** Tokens that must all be refused, each with why. */
async function badHeaders(): Promise<Array<[string, string]>> {
  const now = Math.floor(Date.now() / 1000);
  const good = await testToken();
  const [header, , signature] = good.split('.');
  const otherSecret = new TextEncoder().encode('another-secret-that-is-long-enough-for-hs256');
  const { privateKey: rsaKey } = await generateKeyPair('RS256');
  const claims = { scope: 'orders:read orders:write catalog:write inventory:write' };
  return [
    ['an empty header', ''],
    ['another scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['Bearer without a token', 'Bearer'],
    ['Bearer with two words', `Bearer ${good} extra`],
    ['a token that is not a JWT', 'Bearer not-a-jwt'],
    ['a JWT cut short', `Bearer ${good.split('.').slice(0, 2).join('.')}`],
    [
      'a bad signature (another key)',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('mallory').setExpirationTime('1h').sign(otherSecret)}`,
    ],
    [
      'a payload changed after signing',
      `Bearer ${header}.${json({ ...payloadOf(good), sub: 'admin' })}.${signature}`,
    ],
    ['alg none (unsigned)', `Bearer ${json({ alg: 'none', typ: 'JWT' })}.${json({ ...claims, sub: 'mallory', exp: now + 3600 })}.`],
    [
      'alg RS256 (a key the gateway does not hold)',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).setSubject('mallory').setExpirationTime('1h').sign(rsaKey)}`,
    ],
    [
      'alg HS512 with the right secret',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).setSubject('mallory').setExpirationTime('1h').sign(new Uint8Array([...testSecret, ...testSecret]))}`,
    ],
    ['an expired token', `Bearer ${await testToken(undefined, 'late', { expiresIn: '-1h' })}`],
    [
      'a token not valid yet (nbf)',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('early').setNotBefore('1h').setExpirationTime('2h').sign(testSecret)}`,
    ],
    [
      'a token without sub',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(testSecret)}`,
    ],
    [
      'a token without exp (it would never expire)',
      `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('forever').sign(testSecret)}`,
    ],
  ];
}

function expectUnauthenticated(answer: Answer<GraphQLAnswer>, graphql: boolean) {
  expectRefusal(answer, 'UNAUTHENTICATED', 401, graphql);
  expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
}

describe('without an Authorization header', () => {
  it('reads the public catalogue: pets, categories, inventory, a pet', async () => {
    const answer = await postGraphQL(gateway.baseUrl, {
      query: `query ($id: ID!) { ${publicRead.slice(1, -1)} pet(id: $id) { name } inventorySummary { status quantity } }`,
      variables: { id: petId },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data).toMatchObject({
      pets: { totalCount: 1 },
      categories: { totalCount: 1 },
      inventory: { totalCount: 1 },
      pet: { name: 'Rex' },
    });
    expect((await rest.get(`/pets/${petId}`, { authorization: '' })).status).toBe(200);
  });

  it('is anonymous for what needs a token: 401 with the scope named', async () => {
    const answer = await postGraphQL(gateway.baseUrl, { query: '{ orders { totalCount } }' });
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(answer.body.errors?.[0]?.message).toContain('orders:read');
    const restAnswer = await rest.get('/store/orders', { authorization: '' });
    expect(restAnswer.status).toBe(401);
    expect(restAnswer.body).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(restAnswer.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('a header that is present but not a valid bearer token', () => {
  let cases: Array<[string, string]>;
  beforeAll(async () => {
    cases = await badHeaders();
  });

  it('is 401 UNAUTHENTICATED with WWW-Authenticate on a public GraphQL read, never anonymous', async () => {
    expect(cases.length).toBe(15);
    for (const [why, authorization] of cases) {
      const answer = await postGraphQL(gateway.baseUrl, { query: publicRead }, { authorization });
      expect(answer.status, why).toBe(401);
      expectUnauthenticated(answer, true);
    }
  });

  it('is 401 on GraphQL writes too, and nothing is written', async () => {
    for (const [why, authorization] of cases) {
      const answer = await postGraphQL(
        gateway.baseUrl,
        { query: 'mutation { createCategory(input: { name: "Intruders" }) { id } }' },
        { authorization },
      );
      expect(answer.status, why).toBe(401);
      expectUnauthenticated(answer, true);
    }
    expect(await gateway.prisma.category.count({ where: { name: 'Intruders' } })).toBe(0);
  });

  it('is 401 on the REST routes, public or not, as their OpenAPI document says', async () => {
    // The REST client reads an empty Authorization as "send none"; that case goes by hand below.
    for (const [why, authorization] of cases.filter(([, header]) => header !== '')) {
      for (const path of [`/pets/${petId}`, '/store/orders']) {
        const answer = await rest.get(path, { authorization });
        expect(answer.status, `${why} on ${path}`).toBe(401);
        expectUnauthenticated({ ...answer, body: answer.body as GraphQLAnswer }, false);
      }
    }
    const empty = await send(gateway.baseUrl, `/pets/${petId}`, { headers: { authorization: '' } });
    expectUnauthenticated(empty, false);
  });

  it('names what is wrong in plain words, the same on GraphQL and REST, without echoing the token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await testToken(undefined, 'late', { expiresIn: '-1h' });
    const otherSecret = new TextEncoder().encode('another-secret-that-is-long-enough-for-hs256');
    const good = await testToken();
    const [header, , signature] = good.split('.');
    const hs256 = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' });
    const early = await hs256({}).setSubject('early').setNotBefore(now + 3600).setExpirationTime('2h').sign(testSecret);
    const malformed = 'The bearer token is malformed: a JWT is three base64url parts (header, claims, signature) joined by dots.';
    const cases: Array<[string, string, string]> = [
      ['another scheme', 'Basic dXNlcjpwYXNzd29yZA==', 'The Authorization header must be "Bearer <token>".'],
      ['a token that is not a JWT', 'not-a-jwt', malformed],
      ['a JWT cut short', good.split('.').slice(0, 2).join('.'), malformed],
      [
        'claims that are not JSON',
        await new CompactSign(new TextEncoder().encode('not json')).setProtectedHeader({ alg: 'HS256' }).sign(testSecret),
        'The bearer token is malformed: its claims are not a JSON object.',
      ],
      [
        'a bad signature (another key)',
        await hs256({}).setSubject('mallory').setExpirationTime('1h').sign(otherSecret),
        "The bearer token's signature does not verify.",
      ],
      [
        'a payload changed after signing',
        `${header}.${json({ ...payloadOf(good), sub: 'admin' })}.${signature}`,
        "The bearer token's signature does not verify.",
      ],
      [
        'alg none',
        `${json({ alg: 'none', typ: 'JWT' })}.${json({ sub: 'mallory', exp: now + 3600 })}.`,
        'The bearer token is signed with an algorithm that is not accepted; accepted: HS256.',
      ],
      ['an expired token', expired, `The bearer token expired at ${new Date(payloadOf(expired).exp * 1000).toISOString()}.`],
      ['a token not valid yet', early, `The bearer token is not valid before ${new Date((now + 3600) * 1000).toISOString()}.`],
      [
        'a token without exp',
        await hs256({}).setSubject('forever').sign(testSecret),
        'The bearer token has no expiry (exp claim); only tokens that expire are accepted.',
      ],
      [
        'an exp that is text',
        await hs256({ exp: 'tomorrow' }).setSubject('x').sign(testSecret),
        "The bearer token's exp claim must be a finite number of seconds.",
      ],
      [
        'a token without sub',
        await hs256({}).setExpirationTime('1h').sign(testSecret),
        'The bearer token has no subject (sub claim).',
      ],
      [
        'a header extension nobody knows (crit)',
        `${json({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 })}.${json({ sub: 'x', exp: now + 3600 })}.${signature}`,
        "The bearer token's header asks for a feature that is not supported.",
      ],
    ];
    for (const [why, token, message] of cases) {
      const authorization = token.startsWith('Basic ') ? token : `Bearer ${token}`;
      const answers = [
        await postGraphQL(gateway.baseUrl, { query: publicRead }, { authorization }),
        await send<GraphQLAnswer>(gateway.baseUrl, `/pets/${petId}`, { headers: { authorization } }),
      ];
      for (const answer of answers) {
        expect(answer.status, why).toBe(401);
        expect(answer.body.message, why).toBe(message);
        expect(answer.text, why).not.toMatch(/ERR_[A-Z_]+|JWS|JOSE/);
        expect(answer.text, why).not.toContain(token);
      }
      expect(answers[0]!.body.errors?.[0]?.message, why).toBe(message);
    }
  });
});

describe('a valid token', () => {
  it('is accepted with the scope claim as a space-separated string or an scp array', async () => {
    const scp = await new SignJWT({ scp: ['orders:read'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('array-scopes')
      .setExpirationTime('1h')
      .sign(testSecret);
    for (const token of [await testToken(['orders:read']), scp]) {
      const answer = await postGraphQL(gateway.baseUrl, { query: '{ orders { totalCount } }' }, bearer(token));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { orders: { totalCount: 1 } } });
    }
  });

  it('is accepted a few seconds after exp (clock tolerance 5 s), not later', async () => {
    const justExpired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('tolerated')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 2)
      .sign(testSecret);
    expect((await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(justExpired))).status).toBe(200);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('late')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 30)
      .sign(testSecret);
    expect((await postGraphQL(gateway.baseUrl, { query: '{ __typename }' }, bearer(expired))).status).toBe(401);
  });

  it('is refused once its time is up, though it was accepted (and its check remembered) before', async () => {
    const exp = Math.floor(Date.now() / 1000) - 3;
    const token = await new SignJWT({ scope: 'orders:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('remembered')
      .setExpirationTime(exp)
      .sign(testSecret);
    const read = () => postGraphQL(gateway.baseUrl, { query: '{ orders { totalCount } }' }, bearer(token));
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    // Past exp and the 5 s of clock tolerance.
    await new Promise((resolve) => setTimeout(resolve, (exp + 5) * 1000 - Date.now() + 250));
    const late = await read();
    expect(late.status).toBe(401);
    expect(late.body.message).toBe(`The bearer token expired at ${new Date(exp * 1000).toISOString()}.`);
  });
});

/**
 * An identity provider's keys: a JWKS served by a local HTTP server, an
 * ES256 key pair made for the test, and tokens with issuer and audience.
 */
const ISSUER = 'https://id.petstore.test/';
const AUDIENCE = 'petstore-gateway';
let jwksServer: Server;
let jwksUrl = '';
let jwksRequests = 0;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const publicJwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  jwksServer = createServer((request, response) => {
    jwksRequests++;
    if (request.url !== '/.well-known/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
});

interface ProviderToken {
  key?: CryptoKey;
  kid?: string;
  issuer?: string;
  audience?: string;
  subject?: string;
  scope?: string;
}

function providerToken({
  key = signingKey,
  kid = 'test-key',
  issuer = ISSUER,
  audience = AUDIENCE,
  subject = 'provider-user',
  scope = 'orders:read',
}: ProviderToken = {}) {
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);
}

describe('tokens of an identity provider (JWKS)', () => {
  const verifier = () => createTokenVerifier({ kind: 'jwks', url: jwksUrl, issuer: ISSUER, audience: AUDIENCE });

  async function refusal(verify: ReturnType<typeof verifier>, token: string): Promise<DomainError> {
    const error = await verify(token).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }

  it('accepts a token signed by the provider, for its issuer and audience', async () => {
    const principal = await verifier()(await providerToken({ scope: 'orders:read catalog:write' }));
    expect(principal.subject).toBe('provider-user');
    expect([...principal.scopes].sort()).toEqual(['catalog:write', 'orders:read']);
  });

  it('refuses another issuer, another audience, an unknown key, a key of the wrong kind, and HS256', async () => {
    const verify = verifier();
    const refused: Array<[string, string, string]> = [
      [
        'another issuer',
        await providerToken({ issuer: 'https://evil.test/' }),
        `The bearer token's issuer (iss claim) is not ${ISSUER}, the one whose tokens are accepted.`,
      ],
      [
        'another audience',
        await providerToken({ audience: 'another-api' }),
        `The bearer token's audience (aud claim) does not include ${AUDIENCE}, this gateway.`,
      ],
      [
        'a key the set does not have',
        await providerToken({ kid: 'unknown' }),
        "The bearer token names a signing key (kid) the identity provider's key set does not have.",
      ],
      [
        'the right kid, signed by a stranger',
        await providerToken({ key: strangerKey }),
        "The bearer token's signature does not verify.",
      ],
      [
        'HS256 with the test secret',
        await testToken(),
        'The bearer token is signed with an algorithm that is not accepted; accepted: RS256, ES256, PS256, EdDSA.',
      ],
    ];
    for (const [why, token, message] of refused) {
      const error = await refusal(verify, token);
      expect(error.code, why).toBe('UNAUTHENTICATED');
      expect(error.message, why).toBe(message);
    }
  });

  it('answers UNAVAILABLE (503), not 401 and not anonymous, when the keys cannot be fetched', async () => {
    for (const url of [`${new URL(jwksUrl).origin}/missing.json`, 'http://127.0.0.1:9/jwks.json']) {
      const verify = createTokenVerifier({ kind: 'jwks', url, issuer: ISSUER, audience: AUDIENCE });
      const error = await refusal(verify, await providerToken());
      expect(error.code, url).toBe('UNAVAILABLE');
      expect(error.status).toBe(503);
    }
  });

  it('fetches the key set once, not per token', async () => {
    const verify = verifier();
    const before = jwksRequests;
    for (let i = 0; i < 5; i++) await verify(await providerToken({ subject: `user-${i}` }));
    expect(jwksRequests - before).toBe(1);
  });
});

describe('a gateway verifying tokens against a JWKS', () => {
  const provider = useTestGateway({
    tokenKeys: () => ({ kind: 'jwks', url: jwksUrl, issuer: ISSUER, audience: AUDIENCE }),
  });
  const unreachable = useTestGateway({
    tokenKeys: { kind: 'jwks', url: 'http://127.0.0.1:9/jwks.json', issuer: ISSUER, audience: AUDIENCE },
  });

  it('lets a provider token with the scope read orders', async () => {
    const answer = await postGraphQL(provider.baseUrl, { query: '{ orders { totalCount } }' }, bearer(await providerToken()));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { orders: { totalCount: 0 } } });
    const restAnswer = await send(provider.baseUrl, '/store/orders', { headers: bearer(await providerToken()) });
    expect(restAnswer.status).toBe(200);
  });

  it('refuses a token for another audience or issuer with 401, even on a public read, saying which', async () => {
    const noIssuer = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
      .setAudience(AUDIENCE)
      .setSubject('provider-user')
      .setExpirationTime('5m')
      .sign(signingKey);
    const cases: Array<[string, string]> = [
      [
        await providerToken({ audience: 'another-api' }),
        `The bearer token's audience (aud claim) does not include ${AUDIENCE}, this gateway.`,
      ],
      [
        await providerToken({ issuer: 'https://x/' }),
        `The bearer token's issuer (iss claim) is not ${ISSUER}, the one whose tokens are accepted.`,
      ],
      [noIssuer, `The bearer token names no issuer (iss claim); tokens issued by ${ISSUER} are accepted.`],
    ];
    for (const [token, message] of cases) {
      const answer = await postGraphQL(provider.baseUrl, { query: '{ pets { totalCount } }' }, bearer(token));
      expectUnauthenticated(answer, true);
      expect(answer.body.message).toBe(message);
      const restAnswer = await send<GraphQLAnswer>(provider.baseUrl, '/store/orders', { headers: bearer(token) });
      expectUnauthenticated(restAnswer, false);
      expect(restAnswer.body.message).toBe(message);
    }
  });

  it('answers 503 UNAVAILABLE without WWW-Authenticate when the provider cannot be reached', async () => {
    const answer = await postGraphQL(unreachable.baseUrl, { query: '{ pets { totalCount } }' }, bearer(await providerToken()));
    expectRefusal(answer, 'UNAVAILABLE', 503);
    expect(answer.headers.get('www-authenticate')).toBeNull();
    // Anonymous requests do not need the provider.
    expect((await postGraphQL(unreachable.baseUrl, { query: '{ pets { totalCount } }' })).status).toBe(200);
  });
});
