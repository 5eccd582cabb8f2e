import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { ExecutionArgs } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { anonymous, type Principal } from '../auth/scopes.js';
import type { TokenVerifier } from '../auth/tokens.js';
import type { GraphQLContext } from '../builder.js';
import { DomainError } from '../errors.js';
import type { RequestContext } from './graphql.js';

type ConnectionExtra = Extra & { principal?: Principal } & Record<PropertyKey, unknown>;

/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the same path as HTTP,
 * through the same yoga instance: same schema, plugins, limits and scopes.
 * The token comes in the connection's `authorization` parameter
 * (`{ authorization: "Bearer <jwt>" }`); a bad one closes the socket with 4401.
 */
export function serveGraphQLOverWebSocket(
  server: Server,
  yoga: YogaServerInstance<RequestContext, GraphQLContext>,
  verifyToken: TokenVerifier,
) {
  const sockets = new WebSocketServer({ server, path: yoga.graphqlEndpoint });
  const disposable = useServer<Record<string, unknown> | undefined, ConnectionExtra>(
    {
      onConnect: async (ctx) => {
        const header = ctx.connectionParams?.authorization;
        if (header === undefined) {
          ctx.extra.principal = anonymous;
          return true;
        }
        const token = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
        try {
          if (!token) throw new DomainError('UNAUTHENTICATED', 'authorization must be "Bearer <token>".');
          ctx.extra.principal = await verifyToken(token);
          return true;
        } catch (error) {
          if (error instanceof DomainError) return false;
          throw error;
        }
      },
      execute: (args) => (args.rootValue as Envelope).execute(args),
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args),
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          requestId: randomUUID(),
          principal: ctx.extra.principal ?? anonymous,
        });
        const document = parse(params.query);
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
      },
    },
    sockets,
  );
  return {
    sockets,
    /** Completes every operation and closes every socket with 1001 (going away). */
    async close() {
      await disposable.dispose();
      for (const socket of sockets.clients) socket.close(1001, 'Server shutting down');
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

type Envelope = {
  execute: (args: ExecutionArgs) => ReturnType<NonNullable<ServerOptions['execute']>>;
  subscribe: (args: ExecutionArgs) => ReturnType<NonNullable<ServerOptions['subscribe']>>;
};
