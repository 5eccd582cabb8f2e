import { parseArgs } from 'node:util';
import { tokenKeys } from '../auth/keys.js';
import { allScopes, isScope } from '../auth/scopes.js';
import { mintToken } from '../auth/tokens.js';
import { ConfigError, loadConfig } from '../config.js';

// npm run token -- --scope orders:read --scope orders:write [--subject alice] [--expires 8h]
// Mints a bearer token for the gateway's HS256 key (in development, the key
// made for the data folder). An identity provider's tokens (JWKS) are not ours to mint.
const usage = `Usage: npm run token -- --scope <scope> [--scope <scope> ...] [--subject <name>] [--expires <span>]
Scopes: ${allScopes.join(', ')}`;

try {
  const { values } = parseArgs({
    options: {
      scope: { type: 'string', multiple: true, default: [] },
      subject: { type: 'string', default: 'developer' },
      expires: { type: 'string', default: '8h' },
    },
  });
  const unknown = values.scope.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw new Error(`Unknown scope ${unknown.join(', ')}.\n${usage}`);
  const config = loadConfig();
  const keys = await tokenKeys(config.auth, config.dataDir);
  if (keys.kind !== 'hs256') throw new Error('AUTH_JWKS_URL is set: tokens come from your identity provider.');
  const token = await mintToken(keys.secret, {
    subject: values.subject,
    scopes: values.scope,
    expiresIn: values.expires,
    ...(keys.issuer ? { issuer: keys.issuer } : {}),
    ...(keys.audience ? { audience: keys.audience } : {}),
  });
  console.log(token);
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof Error ? error.message : error);
  console.error(usage);
  process.exit(1);
}
