import { type DocumentNode, getOperationAST, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import type { DomainEvent, EventPublisher } from '../../domain/events.js';
import { answerTags, resolveWriteTags, writeTags } from './dependencies.js';
import type { ResponseCache } from './store.js';
import type { RequestContext } from '../types.js';
import { operationFacts } from '../plugins/operation-facts.js';

type Context = GraphQLContext & RequestContext;

/** Whether a document asks for parts delivered later (@defer, @stream): such answers are not kept. */
const incremental = new WeakMap<DocumentNode, boolean>();
const isIncremental = (document: DocumentNode) => {
  let found = incremental.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') found = true;
      },
    });
    incremental.set(document, found);
  }
  return found;
};

/** Whether the response cache may keep an operation's answer: a query, not delivered in parts. */
export function mayBeCached(document: DocumentNode, operationName?: string | null): boolean {
  return getOperationAST(document, operationName)?.operation === 'query' && !isIncremental(document);
}

/**
 * The response cache's part inside GraphQL (the answers themselves are kept
 * and given by the HTTP layer, serve.ts, before GraphQL runs):
 *
 * - every mutation stamps what it changed in the write log before it answers,
 *   even one that failed (a write that committed and then failed to answer
 *   must not leave answers from before it): the entities of its arguments and
 *   of the domain events it published, and for a rename the name-ordered lists
 *   of its pet's category (read after the write);
 * - a query's answer is noted as one to keep, with the tags of what it
 *   depends on, when it has no errors, is not delivered in parts, uses no
 *   deprecated field (whose every use is counted, and which a brownout or the
 *   sunset refuses), and read no subject: an answer whose execution read the
 *   caller's `principal.subject` depends on who asks and is never shared. No
 *   field reads it today; one that does is served fresh to each caller.
 */
export function useResponseCache(cache: ResponseCache): Plugin<Context> {
  return {
    onExecute({ args }) {
      const context = args.contextValue;
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (operation === 'mutation') return recordWrite(cache, context, args);
      const note = context.cacheNote;
      if (!note || operation !== 'query') return;
      note.query = true;
      if (!mayBeCached(args.document, args.operationName)) return;
      if (operationFacts(args.schema, args.document, args.operationName).deprecated.length > 0) return;
      const subjectRead = watchSubject(context);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || result.errors?.length || subjectRead()) return;
          note.tags = [...answerTags(args.schema, args.document, args.operationName, args.variableValues, result.data)];
        },
      };
    },
  };
}

function recordWrite(
  cache: ResponseCache,
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
    async onExecuteDone() {
      const tags = writeTags(args.schema, args.document, args.operationName, args.variableValues ?? undefined, published);
      await cache.versions.stamp(await resolveWriteTags(tags, (petIds) => categoriesOf(context, petIds)));
    },
  };
}

/** Gives the context a principal whose subject, when read, makes the answer one not to keep. */
function watchSubject(context: Context): () => boolean {
  let read = false;
  const principal = context.principal;
  const watched = { ...principal };
  Object.defineProperty(watched, 'subject', {
    enumerable: true,
    get() {
      read = true;
      return principal.subject;
    },
  });
  context.principal = watched;
  return () => read;
}

/** The category of each pet, read on the primary (a mutation's client) after the write. */
async function categoriesOf(context: Context, petIds: string[]): Promise<Map<string, string>> {
  const pets = await context.prisma.pet.findMany({
    where: { id: { in: petIds.map((id) => BigInt(id)) } },
    select: { id: true, categoryId: true },
  });
  return new Map(pets.map((pet) => [String(pet.id), String(pet.categoryId)]));
}
