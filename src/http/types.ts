import type { HttpBindings } from '@hono/node-server';
import type { Principal } from '../auth/scopes.js';
import type { DomainError } from '../errors.js';

/**
 * The types every part of the request path shares: what the HTTP layer learns
 * about a request, what it hands GraphQL, and what the request log and
 * metrics read back when the answer is sent. A leaf: it imports only types.
 */

/** Filled in while a request runs, for its log line and metrics. */
export interface RequestTrace {
  /** The GraphQL operation's name (or kind), set by the operation observer; REST routes are named by hono. */
  operation?: string;
  /** The code of the spec's Error body this request was answered with, if any (GraphQL errors are counted apart). */
  errorCode?: string;
}

/**
 * Filled in by the response cache's GraphQL plugin for the HTTP layer: what the answer depends on,
 * when it may be kept (a query answered without errors that read no subject and no deprecated field).
 */
export interface CacheNote {
  /** Set for a query (what the cache counts as a miss; a mutation sent over the same path is not one). */
  query?: boolean;
  tags?: string[];
}

/**
 * Whose cost budget a request spends (the token's subject, else the client's address), and where
 * that budget stands once it has: what the RateLimit headers of the answer say.
 */
export interface DemandNote {
  client: string;
  budget?: { capacity: number; remaining: number; resetSeconds: number };
}

/** What the HTTP layer hands every GraphQL request (yoga's server context). */
export interface RequestContext {
  requestId: string;
  principal: Principal;
  trace?: RequestTrace;
  /** Aborted once the request has been answered at its time limit: work not yet started is not started. */
  deadline?: AbortSignal;
  /** A write position the caller has seen (the Read-After header): its reads must see at least that state. */
  readAfter?: bigint;
  /** Present when the response cache may keep this request's answer. */
  cacheNote?: CacheNote;
  /**
   * Who is asking, as the rate limit counts clients (token subject, else address): whose cost budget
   * the request spends, and live queries' per-client limit.
   */
  demand?: DemandNote;
  /** The connection it came on (the TCP socket; the WebSocket): live queries' per-connection limit. */
  connection?: object;
}

/** What hono's middleware leaves for the handlers behind them, and for each other. */
export type GatewayEnv = {
  /** Node's own request and response, under @hono/node-server. */
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
    trace: RequestTrace;
    principal: Principal;
    /** Why the request's token was refused; answered by refuseInvalidTokens, after the rate limit. */
    tokenRefusal?: DomainError;
    /** Aborted when the request is answered at its time limit (limitDuration). */
    deadline?: AbortSignal;
    /** The Read-After header's write position, when sent (readAfterPosition). */
    readAfter?: bigint;
    /** The client whose cost budget the request spends, set by the rate limit. */
    demand?: DemandNote;
  };
};
