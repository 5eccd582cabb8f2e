import type { IncomingMessage, Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import type { Context, ServerOptions, SubscribePayload } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { anonymous, type Principal } from '../../auth/scopes.js';
import type { TokenVerifier } from '../../auth/tokens.js';
import type { TrustedDocumentsSettings } from '../../config.js';
import { DomainError, maskedInternalError, toGraphQLError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { webSocketDocument } from '../plugins/use-trusted-documents.js';
import { bearerToken, requestIdFrom } from '../request.js';
import { inOperationSpan } from '../plugins/use-operation-spans.js';
import type { GraphQLHandler } from './graphql.js';

type ConnectionExtra = Extra & { principal?: Principal } & Record<PropertyKey, unknown>;
type ConnectionContext = Context<Record<string, unknown> | undefined, ConnectionExtra>;

/** How long close() lets clients answer the close handshake before dropping them. */
const CLOSE_HANDSHAKE_MS = 2_000;

export interface WebSocketOptions {
  verifyToken: TokenVerifier;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** A larger message closes its connection with 1009, as a larger body gets 413 over HTTP. */
  maxMessageBytes?: number;
  /** Counts each operation against the caller's rate limit: the RATE_LIMITED error when over it. */
  refuseOverLimit?: (principal: Principal, upgrade: IncomingMessage) => Promise<DomainError | undefined>;
  /**
   * Who is asking, as the rate limit counts clients (the token's subject, else the client's
   * address): whose cost budget an operation spends, and live queries' per-client limit.
   */
  clientOf?: (principal: Principal, upgrade: IncomingMessage) => string;
  /** Which documents are run (TRUSTED_DOCUMENTS); any when absent. */
  trustedDocuments?: TrustedDocumentsSettings;
}

/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the same path as HTTP,
 * through the same yoga instance: same schema, plugins, limits and scopes.
 * The token comes in the connection's `authorization` parameter
 * (`{ authorization: "Bearer <jwt>" }`); a bad one closes the socket with
 * 4403 (graphql-ws' Forbidden). Messages are held to the HTTP body limit,
 * and each operation counts against the caller's rate limit.
 */
export function serveGraphQLOverWebSocket(
  server: Server,
  yoga: GraphQLHandler,
  { verifyToken, logger, maxMessageBytes, refuseOverLimit, clientOf, trustedDocuments }: WebSocketOptions,
) {
  const sockets = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload: maxMessageBytes });
  // The connections open now, so close() can tell when their operations have completed.
  const connections = new Set<ConnectionContext>();
  const disposable = useServer<Record<string, unknown> | undefined, ConnectionExtra>(
    {
      onConnect: async (ctx) => {
        const header = ctx.connectionParams?.authorization;
        const token = typeof header === 'string' ? bearerToken(header) : undefined;
        try {
          if (header === undefined) ctx.extra.principal = anonymous;
          else if (!token) throw new DomainError('UNAUTHENTICATED', 'authorization must be "Bearer <token>".');
          else ctx.extra.principal = await verifyToken(token);
        } catch (error) {
          if (error instanceof DomainError) return false;
          throw error;
        }
        connections.add(ctx);
        return true;
      },
      onClose: (ctx) => {
        connections.delete(ctx);
      },
      // Each in an operation span, as yoga gives an HTTP request's operation (when traces are sent).
      execute: (args) => inOperationSpan(args, () => (args.rootValue as Envelope).execute(args)),
      subscribe: (args) => inOperationSpan(args, () => (args.rootValue as Envelope).subscribe(args)),
      onSubscribe: (ctx, _id, params) =>
        // Whatever fails here fails this operation with a masked error, never the connection.
        startOperation(ctx, params).catch((error: unknown) => {
          logger.error({ err: error }, 'unexpected error starting a WebSocket operation');
          return [maskedInternalError()];
        }),
    },
    sockets,
  );

  async function startOperation(ctx: ConnectionContext, params: SubscribePayload) {
    const principal = ctx.extra.principal ?? anonymous;
    if (principal.expiresAt !== undefined && principal.expiresAt <= Date.now()) {
      // The token this connection was opened with has expired since: as over HTTP, 401 for this operation.
      const expired = new DomainError('UNAUTHENTICATED', 'The token has expired; connect again with a new one.');
      return [toGraphQLError(expired)];
    }
    // Each operation counts as one HTTP request would, against the same limit.
    const overLimit = await refuseOverLimit?.(principal, ctx.extra.request);
    if (overLimit) return [toGraphQLError(overLimit)];
    const query = webSocketDocument(trustedDocuments, params);
    if (query instanceof DomainError) return [toGraphQLError(query)];
    const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
      ...ctx,
      req: ctx.extra.request,
      socket: ctx.extra.socket,
      params,
      requestId: crypto.randomUUID(),
      principal,
      ...(clientOf ? { demand: { client: clientOf(principal, ctx.extra.request) } } : {}),
      connection: ctx.extra.socket,
    });
    let document: ReturnType<typeof parse>;
    try {
      document = parse(query);
    } catch (error) {
      // A syntax error fails this operation (an `error` message), not the whole connection.
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const errors = validate(schema, document);
    if (errors.length > 0) return errors;
    return {
      schema,
      document,
      operationName: params.operationName,
      variableValues: params.variables,
      contextValue: await contextFactory(),
      rootValue: { execute, subscribe },
    } satisfies ExecutionArgs;
  }

  // graphql-ws writes socket and server errors to the console as multi-line text: they are
  // logged here instead, one JSON line each. The usual one is a message over the size limit,
  // for which ws has already closed the connection with 1009.
  sockets.removeAllListeners('error');
  sockets.on('error', (error) => logger.error({ err: error }, 'WebSocket server error'));
  // One request line per WebSocket connection (its upgrade request), written when it closes,
  // as the HTTP requests get theirs: id (taken from X-Request-Id or made), duration, outcome.
  sockets.on('connection', (socket, request) => {
    const startedAt = performance.now();
    const requestId = requestIdFrom(request.headers['x-request-id']);
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) => {
      logger.warn({ requestId, error: error.message, code: error.code }, 'WebSocket connection error');
      if (socket.readyState === socket.OPEN) socket.close(1011, 'Internal server error');
    });
    socket.once('close', (closeCode) => {
      logger.info(
        {
          requestId,
          method: 'GET',
          path: yoga.graphqlEndpoint,
          operation: 'websocket',
          status: 101,
          closeCode,
          durationMs: Math.round(performance.now() - startedAt),
        },
        'request',
      );
    });
  });

  const operationsOpen = () => [...connections].some((ctx) => Object.keys(ctx.subscriptions).length > 0);

  /** Drops every socket at once. */
  const terminate = () => {
    for (const socket of sockets.clients) socket.terminate();
  };

  return {
    sockets,
    /**
     * For shutdown, once the event bus has ended every subscription: waits
     * (briefly) until each operation's `complete` has been sent, then closes
     * every socket with 1001 (going away), dropping those that do not answer
     * the close handshake in time.
     */
    async close() {
      const deadline = Date.now() + CLOSE_HANDSHAKE_MS;
      while (operationsOpen() && Date.now() < deadline) await delay(10);
      const late = setTimeout(terminate, Math.max(0, deadline - Date.now()) + 500);
      // Sends 1001 to every client and resolves once all have closed.
      await disposable.dispose();
      clearTimeout(late);
    },
    /** For the end of the grace period: drops every socket at once. */
    terminate,
  };
}

type Envelope = {
  execute: (args: ExecutionArgs) => ReturnType<NonNullable<ServerOptions['execute']>>;
  subscribe: (args: ExecutionArgs) => ReturnType<NonNullable<ServerOptions['subscribe']>>;
};
