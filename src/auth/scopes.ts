import { DomainError } from '../errors.js';

/**
 * Who may do what, declared once. GraphQL fields name these scopes through
 * Pothos' scope-auth plugin; REST routes call `requireScope` with the same
 * names. Reading the catalogue and stock is public.
 */
export const scopes = {
  readOrders: 'orders:read',
  writeOrders: 'orders:write',
  writeCatalog: 'catalog:write',
  writeInventory: 'inventory:write',
} as const;

export type Scope = (typeof scopes)[keyof typeof scopes];

export const allScopes: readonly Scope[] = Object.values(scopes);

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}

/** The caller of one request: anonymous, or a verified token's subject and scopes. */
export interface Principal {
  subject: string | undefined;
  scopes: ReadonlySet<string>;
  /** When the token stops being valid (ms since the epoch); long subscriptions end then. */
  expiresAt?: number;
  /** The client application, from the claim METRICS_CLIENT_CLAIM names; for metrics. */
  client?: string;
}

/** How metrics name a caller: its client application, never its subject (personal data, unbounded). */
export function metricsClient(principal: Principal): string {
  return principal.client ?? (principal.subject === undefined ? 'anonymous' : 'authenticated');
}

export const anonymous: Principal = { subject: undefined, scopes: new Set() };

/** The error for a caller who lacks `scope`: 401 when anonymous (a token would help), 403 otherwise. */
export function missingScope(principal: Principal, scope: Scope): DomainError {
  return principal.subject === undefined
    ? new DomainError('UNAUTHENTICATED', `This needs a bearer token with the scope ${scope}.`)
    : new DomainError('FORBIDDEN', `Your token lacks the scope ${scope}.`);
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw missingScope(principal, scope);
}
