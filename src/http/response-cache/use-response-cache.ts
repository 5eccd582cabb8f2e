import { type DocumentNode, getOperationAST, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { answerTags } from '../dependency-tags/tags.js';
import type { RequestContext } from '../types.js';
import { operationFacts } from '../plugins/operation-facts.js';

type Context = GraphQLContext & RequestContext;

/** Whether a document asks for parts delivered later (@defer, @stream) or a live answer (@live): such answers are not kept. */
const incremental = new WeakMap<DocumentNode, boolean>();
const isIncremental = (document: DocumentNode) => {
  let found = incremental.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream' || node.name.value === 'live') found = true;
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
 * and given by the HTTP layer before GraphQL runs, serve.ts):
 *
 * - every mutation stamps what it changed in the write log before it answers
 *   (useWriteTags tells it, use-write-tags.ts);
 * - a query's answer is noted as one to keep, with the tags of what it
 *   depends on, when it has no errors, is not delivered in parts, uses no
 *   deprecated field (whose every use is counted, and which a brownout or the
 *   sunset refuses), and read no subject: an answer whose execution read the
 *   caller's `principal.subject` depends on who asks and is never shared. No
 *   field reads it today; one that does is served fresh to each caller.
 */
export function useResponseCache(): Plugin<Context> {
  return {
    onExecute({ args }) {
      const context = args.contextValue;
      const operation = getOperationAST(args.document, args.operationName)?.operation;
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
