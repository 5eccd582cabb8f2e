import { type DocumentNode, getOperationAST } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { parsePosition, type ReadRouting } from '../../database/replicas.js';
import { badPosition, READ_AFTER_HEADER, WRITE_POSITION_HEADER } from '../middleware/read-after.js';
import type { RequestContext } from '../types.js';

type Context = GraphQLContext & RequestContext & Partial<YogaInitialContext>;

/**
 * Queries run on a replica (the whole operation on one server), mutations and
 * subscriptions on the primary. After a mutation the primary's write position
 * goes back to the caller, in the `writePosition` extension and the
 * Write-Position header; a query that carries it (the Read-After header, or
 * the `readAfter` extension over WebSocket) reads a replica only once it has
 * replayed that far.
 */
export interface ReadRoutingPluginOptions {
  /** Queries that must read the primary: those the response cache may keep, so a kept answer is never behind a write. */
  onPrimary?: (document: DocumentNode, operationName?: string | null) => boolean;
}

export function useReadRouting(routing: ReadRouting, { onPrimary }: ReadRoutingPluginOptions = {}): Plugin<Context> {
  const positions = new WeakMap<Request, string>();
  return {
    onExecute({ args }) {
      const context = args.contextValue;
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (operation === 'query') {
        const readAfter = readAfterOf(context);
        if (!onPrimary?.(args.document, args.operationName)) context.prisma = routing.reader(readAfter).prisma;
        return;
      }
      if (operation !== 'mutation') return;
      return {
        async onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          // Asked after the mutation's transactions committed, so the position is at or past them
          // (also for a mutation that failed after a write: the caller still reads what it did).
          const position = await routing.writePosition();
          if (position === undefined) return;
          setResult({ ...result, extensions: { ...result.extensions, writePosition: position } });
          if (context.request) positions.set(context.request, position);
        },
      };
    },
    onResponse({ request, response }) {
      const position = positions.get(request);
      if (position !== undefined) response.headers.set(WRITE_POSITION_HEADER, position);
    },
  };
}

function readAfterOf(context: Context): bigint | undefined {
  if (context.readAfter !== undefined) return context.readAfter;
  const given = (context.params?.extensions as { readAfter?: unknown } | undefined)?.readAfter;
  if (given === undefined) return undefined;
  const position = typeof given === 'string' ? parsePosition(given) : undefined;
  if (position === undefined) throw badPosition(`extensions.readAfter (or the ${READ_AFTER_HEADER} header)`, String(given));
  return position;
}
