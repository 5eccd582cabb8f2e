import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import type { DomainEvent, EventPublisher } from '../../domain/events.js';
import type { RequestContext } from '../types.js';
import { writeTags } from './tags.js';

type Context = GraphQLContext & RequestContext;

/** Told what a write changed, before the write answers; awaited. */
export type WriteListener = (tags: ReadonlySet<string>) => Promise<void> | void;

export interface WriteListeners {
  listeners: readonly WriteListener[];
  /**
   * Whether any of them reads the tags now: when none does, a write need not do the work that only narrows them
   * (where a rename lands, EventPublisher.readsNameRanks).
   */
  read(): boolean;
}

/**
 * What every mutation changed, as dependency tags (tags.ts): the entities of its arguments as its
 * field declares them (`plannedWrite(changes, write)` beside it, src/domain/changes.ts), and those of the domain
 * events it published (a rename's names the category whose name-ordered lists it outdates). The one
 * source of "what did this write touch" for the response cache (which stamps its write log) and
 * live queries (which re-execute what depends on it), whichever engine ran the
 * mutation: its events are heard through the context's publisher. Told before the mutation answers,
 * even when it failed: a write that committed and then failed to answer must not leave answers
 * from before it.
 */
export function useWriteTags(listeners: WriteListeners): Plugin<Context> {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      return recordWrite(listeners, args.contextValue, args);
    },
  };
}

function recordWrite(
  { listeners, read }: WriteListeners,
  context: Context,
  args: { schema: Parameters<typeof writeTags>[0]; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null },
) {
  const published: DomainEvent[] = [];
  const events: EventPublisher = context.events;
  context.events = {
    publish(event) {
      published.push(event);
      events.publish(event);
    },
    readsNameRanks: read,
  };
  return {
    async onExecuteDone({ result }: { result: unknown }) {
      if (refusedWhole(result)) return;
      await tellWrite(listeners, { ...args, variableValues: args.variableValues ?? undefined }, published);
    },
  };
}

/** Tells the listeners what a mutation changed: what its fields declare and what its events say. */
async function tellWrite(
  listeners: readonly WriteListener[],
  args: { schema: Parameters<typeof writeTags>[0]; document: DocumentNode; operationName?: string | null | undefined; variableValues: Record<string, unknown> | undefined },
  published: DomainEvent[],
) {
  const tags = writeTags(args.schema, args.document, args.operationName, args.variableValues, published);
  await Promise.all(listeners.map((listener) => listener(tags)));
}

/** Codes of a mutation field refused before its resolver wrote anything (scopes, arguments). */
const REFUSED_BEFORE_WRITING = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'VALIDATION_FAILED']);

/**
 * A mutation whose every field was refused at its root (a missing scope, a bad argument) and answered
 * nothing: it wrote nothing, and reads nothing to say so. A refusal deeper down (a field of the
 * mutation's answer) may follow a committed write, so it does not count.
 */
function refusedWhole(result: unknown): boolean {
  if (!result || typeof result !== 'object' || Symbol.asyncIterator in result) return false;
  const { data, errors } = result as ExecutionResult;
  if (!errors?.length || (data && Object.values(data).some((value) => value !== null))) return false;
  return errors.every((error) => (error.path?.length ?? 0) <= 1 && REFUSED_BEFORE_WRITING.has(String(error.extensions?.code)));
}
