import type { AuthSettings } from '../config.js';
import { developmentSecret, type TokenKeys } from './tokens.js';

/** The keys the settings name; in development without settings, the data folder's own key. */
export async function tokenKeys(auth: AuthSettings, dataDir: string): Promise<TokenKeys> {
  switch (auth.kind) {
    case 'hs256':
      return { ...auth, kind: 'hs256', secret: new TextEncoder().encode(auth.secret) };
    case 'jwks':
      return auth;
    case 'development':
      return { kind: 'hs256', secret: await developmentSecret(dataDir) };
  }
}
