import { allScopes } from '../../src/auth/scopes.js';
import { mintToken } from '../../src/auth/tokens.js';

/**
 * The one way tests get a bearer token: every test gateway, in process or a
 * real process (AUTH_JWT_SECRET), verifies HS256 tokens with this key.
 */
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256';
export const testSecret = new TextEncoder().encode(TEST_JWT_SECRET);

/** A token with the given scopes (all of them by default) for `subject`, valid an hour unless told, with any further claims. */
export function testToken(
  scopes: readonly string[] = allScopes,
  subject = 'test-user',
  { expiresIn = '1h', claims }: { expiresIn?: string; claims?: Record<string, unknown> } = {},
) {
  return mintToken(testSecret, { subject, scopes: [...scopes], expiresIn, claims });
}
