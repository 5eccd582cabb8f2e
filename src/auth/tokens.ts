import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify, SignJWT } from 'jose';
import { boundedCache, type CacheMetrics } from '../observability/caches.js';
import { DomainError } from '../errors.js';
import type { Principal } from './scopes.js';

/** How tokens are checked: a shared HS256 secret, or an identity provider's JWKS. */
export type TokenKeys =
  | { kind: 'hs256'; secret: Uint8Array; issuer?: string; audience?: string }
  | { kind: 'jwks'; url: string; issuer: string; audience: string };

export type TokenVerifier = (token: string) => Promise<Principal>;

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

/** Scopes from the standard `scope` claim (space-separated) or a `scp` array, as providers differ. */
function scopesOf(payload: JWTPayload): Set<string> {
  const claim = payload.scope ?? payload.scp;
  if (typeof claim === 'string') return new Set(claim.split(' ').filter(Boolean));
  if (Array.isArray(claim)) return new Set(claim.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

/**
 * The identity provider's keys, fetched (and cached by jose) from its JWKS
 * URL. A token naming a key the set does not have is the token's fault (401);
 * a set that cannot be fetched or read is not, and is answered 503
 * UNAVAILABLE, so clients try again rather than throw their token away.
 */
function remoteKeys(url: string): JWTVerifyGetKey {
  const jwks = createRemoteJWKSet(new URL(url));
  return async (header, token) => {
    // jose would take the set's only key for a token that names none: the token must say which key signed it.
    if (typeof header.kid !== 'string' || header.kid === '') {
      throw unauthenticated('The bearer token names no signing key (kid) of the identity provider.');
    }
    try {
      return await jwks(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) throw error;
      throw new DomainError('UNAVAILABLE', "The identity provider's signing keys could not be fetched; try again.");
    }
  };
}

/** Claims that must be finite numbers when present: jose accepts `1e400` (Infinity), which never expires. */
const NUMERIC_DATES = ['exp', 'nbf', 'iat'] as const;

export interface VerifierOptions {
  /**
   * The claim naming the client application (`azp`, `client_id`…), kept on the
   * principal for metrics; a token subject never is, by default.
   */
  clientClaim?: string;
  /** Verified tokens remembered at once (TOKEN_CACHE_MAX_ENTRIES); 10,000 when absent. */
  cacheMaxEntries?: number;
  caches?: CacheMetrics;
}

/** Seconds a token may be past its `exp` (clock skew between the issuer and us). */
const CLOCK_TOLERANCE_S = 5;

/**
 * Tokens verified recently, by their whole text (signature included), so a
 * client sending the same token with every request pays for the signature
 * once a minute rather than every time (WebCrypto's HMAC job was 4.5% of the
 * gateway's samples on the orders page). An entry never outlives its token:
 * its expiry is checked on every use. A minute at most, so a key the identity
 * provider withdraws stops being accepted within a minute; only tokens that
 * verified are kept, so a flood of forged ones cannot fill it.
 */
function verifiedTokens(maxEntries: number, caches: CacheMetrics | undefined) {
  const cache = boundedCache<string, Principal>('verified_tokens', { maxEntries }, caches, { ttlMs: 60_000 });
  return {
    get(token: string): Principal | undefined {
      const principal = cache.get(token);
      if (principal && Date.now() > (principal.expiresAt ?? 0) + CLOCK_TOLERANCE_S * 1000) {
        cache.delete(token);
        return undefined;
      }
      return principal;
    },
    remember: (token: string, principal: Principal) => cache.set(token, principal),
  };
}

export function createTokenVerifier(keys: TokenKeys, { clientClaim, cacheMaxEntries = 10_000, caches }: VerifierOptions = {}): TokenVerifier {
  const key: Uint8Array | JWTVerifyGetKey = keys.kind === 'hs256' ? keys.secret : remoteKeys(keys.url);
  const options = {
    algorithms: keys.kind === 'hs256' ? ['HS256'] : ['RS256', 'ES256', 'PS256', 'EdDSA'],
    ...(keys.issuer ? { issuer: keys.issuer } : {}),
    ...(keys.audience ? { audience: keys.audience } : {}),
    clockTolerance: CLOCK_TOLERANCE_S,
    // A token without an expiry would be good forever.
    requiredClaims: ['exp'],
  };
  const verified = verifiedTokens(cacheMaxEntries, caches);
  return async (token) => {
    const known = verified.get(token);
    if (known) return known;
    try {
      const { payload } = await jwtVerify(token, key as Uint8Array, options);
      if (payload.sub === undefined) throw unauthenticated('The bearer token has no subject (sub claim).');
      if (typeof payload.sub !== 'string' || payload.sub.trim() === '') {
        throw unauthenticated("The bearer token's subject (sub claim) must be a non-empty string.");
      }
      for (const claim of NUMERIC_DATES) {
        const value: unknown = payload[claim];
        if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
          throw unauthenticated(`The bearer token's ${claim} claim must be a finite number of seconds.`);
        }
      }
      const client = clientClaim ? payload[clientClaim] : undefined;
      // exp is a required claim, checked by jwtVerify.
      const principal: Principal = {
        subject: payload.sub,
        scopes: scopesOf(payload),
        expiresAt: (payload.exp as number) * 1000,
        ...(typeof client === 'string' && client !== '' ? { client } : {}),
      };
      verified.remember(token, principal);
      return principal;
    } catch (error) {
      if (error instanceof DomainError) throw error;
      if (error instanceof errors.JOSEError) throw unauthenticated(whyRefused(error, keys, options.algorithms));
      throw error;
    }
  };
}


/**
 * What is wrong with a token jose refused, in words a client developer can act on. jose's own
 * messages and codes (`ERR_JWS_SIGNATURE_VERIFICATION_FAILED`) name its internals; this names the
 * claim or part of the token at fault and what the gateway expects instead. Nothing of the token
 * is echoed: the times are the token's own claims, the issuer and audience the gateway's settings.
 */
function whyRefused(error: errors.JOSEError, keys: TokenKeys, algorithms: string[]): string {
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) {
    const { claim, reason, payload } = error;
    const time = payload[claim];
    // jose compares 1e400 (Infinity) and -1e400 as numbers; no date can be named for them.
    if (reason === 'invalid' || (typeof time === 'number' && !Number.isFinite(time))) {
      return `The bearer token's ${claim} claim must be a finite number of seconds.`;
    }
    const at = typeof time === 'number' ? new Date(time * 1000).toISOString() : '';
    if (error instanceof errors.JWTExpired && claim === 'exp') return `The bearer token expired at ${at}.`;
    if (claim === 'exp') return 'The bearer token has no expiry (exp claim); only tokens that expire are accepted.';
    if (claim === 'nbf') return `The bearer token is not valid before ${at}.`;
    if (claim === 'iss') {
      return reason === 'missing'
        ? `The bearer token names no issuer (iss claim); tokens issued by ${keys.issuer} are accepted.`
        : `The bearer token's issuer (iss claim) is not ${keys.issuer}, the one whose tokens are accepted.`;
    }
    if (claim === 'aud') {
      return reason === 'missing'
        ? `The bearer token names no audience (aud claim); tokens for ${keys.audience} are accepted.`
        : `The bearer token's audience (aud claim) does not include ${keys.audience}, this gateway.`;
    }
    return `The bearer token's ${claim} claim is not accepted.`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "The bearer token's signature does not verify.";
  if (error instanceof errors.JWSInvalid) {
    return 'The bearer token is malformed: a JWT is three base64url parts (header, claims, signature) joined by dots.';
  }
  if (error instanceof errors.JWTInvalid) return 'The bearer token is malformed: its claims are not a JSON object.';
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return `The bearer token is signed with an algorithm that is not accepted; accepted: ${algorithms.join(', ')}.`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "The bearer token names a signing key (kid) the identity provider's key set does not have.";
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return "The bearer token's signing key (kid) matches more than one key of the identity provider's set.";
  }
  if (error instanceof errors.JOSENotSupported) return "The bearer token's header asks for a feature that is not supported.";
  return 'The bearer token is not valid.';
}

export interface MintOptions {
  subject: string;
  scopes: string[];
  /** e.g. '1h', '30d' (jose's time span syntax). */
  expiresIn: string;
  issuer?: string;
  audience?: string;
  /** Further claims (e.g. `azp`, the client application). */
  claims?: Record<string, unknown>;
}

/** Signs an HS256 token: for `npm run token` in development and for tests. */
export async function mintToken(secret: Uint8Array, options: MintOptions): Promise<string> {
  const jwt = new SignJWT({ ...options.claims, scope: options.scopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.subject)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn);
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(secret);
}

export const DEV_SECRET_FILE = 'dev-jwt-secret';

/**
 * The development key: made once for the data folder and kept there (readable
 * by its owner only), so tokens minted with `npm run token` stay valid across
 * restarts. Never used in production, where a key must be configured.
 */
export async function developmentSecret(dataDir: string): Promise<Uint8Array> {
  const file = path.join(dataDir, DEV_SECRET_FILE);
  if (!existsSync(file)) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch((error) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
  }
  return new TextEncoder().encode((await readFile(file, 'utf8')).trim());
}
