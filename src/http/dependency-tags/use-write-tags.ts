import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import type { PrismaClient } from '../../database/client.js';
import { findMany } from '../../database/find-many.js';
import type { DomainEvent, EventPublisher } from '../../domain/events.js';
import type { RequestContext } from '../types.js';
import { resolveWriteTags, writeTags } from './tags.js';

type Context = GraphQLContext & RequestContext;

/** Told what a write changed, before the write answers; awaited. */
export type WriteListener = (tags: ReadonlySet<string>) => Promise<void> | void;

/**
 * What every mutation changed, as dependency tags (tags.ts): the entities of its arguments as its
 * field declares them (`changes(...)` beside it, src/domain/changes.ts), those of the domain events
 * it published, and for a rename the name-ordered lists of its pet's category (read after the
 * write). The one source of "what did this write touch" for the response cache (which stamps its
 * write log) and live queries (which re-execute what depends on it), whichever engine ran the
 * mutation: its events are heard through the context's publisher. Told before the mutation answers,
 * even when it failed: a write that committed and then failed to answer must not leave answers
 * from before it.
 */
export function useWriteTags(listeners: readonly WriteListener[]): Plugin<Context> {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      return recordWrite(listeners, args.contextValue, args);
    },
  };
}

function recordWrite(
  listeners: readonly WriteListener[],
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
  };
  return {
    async onExecuteDone({ result }: { result: unknown }) {
      if (refusedWhole(result)) return;
      await tellWrite(listeners, context.prisma, { ...args, variableValues: args.variableValues ?? undefined }, published);
    },
  };
}

/** Tells the listeners what a mutation changed: what its fields declare and what its events say. */
async function tellWrite(
  listeners: readonly WriteListener[],
  primary: PrismaClient,
  args: { schema: Parameters<typeof writeTags>[0]; document: DocumentNode; operationName?: string | null | undefined; variableValues: Record<string, unknown> | undefined },
  published: DomainEvent[],
) {
  const declared = writeTags(args.schema, args.document, args.operationName, args.variableValues, published);
  const tags = await resolveWriteTags(declared, (petIds) => categoriesOf(primary, petIds));
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

/**
 * The category of each pet, read on the primary (a mutation's client) after the write, with the
 * gateway's own statement (find-many.ts): through Prisma's findMany it cost a rename more CPU than
 * the write itself.
 */
async function categoriesOf(primary: PrismaClient, petIds: string[]): Promise<Map<string, string>> {
  const query = { where: { id: { in: petIds.map((id) => BigInt(id)) } }, select: { id: true, categoryId: true }, orderBy: { id: 'asc' } } as const;
  const pets = await findMany(primary, 'pet', query, () => primary.pet.findMany(query));
  return new Map(pets.map((pet) => [String(pet.id), String(pet.categoryId)]));
}
