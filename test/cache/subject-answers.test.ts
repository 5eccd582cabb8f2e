import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/scopes.js';
import { useResponseCache } from '../../src/http/response-cache/use-response-cache.js';
import type { CacheNote } from '../../src/http/types.js';

/**
 * Answers that depend on who asks are never kept. No field of the gateway's
 * schema reads the caller's subject today, so the rule is driven here through
 * a yoga server of its own whose schema has one: the response cache's plugin
 * sees the resolver read `principal.subject` and does not note the answer as
 * one to keep (the HTTP layer keeps only noted answers).
 */

const schema = createSchema<{ principal: Principal; cacheNote: CacheNote }>({
  typeDefs: 'type Query { me: String, greeting: String }',
  resolvers: {
    Query: {
      me: (_root, _args, context) => context.principal.subject ?? null,
      greeting: () => 'hello',
    },
  },
});

describe('an answer that read the caller’s subject', () => {
  it('is not noted as one to keep; one that read none is, with what it depends on', async () => {
    const yoga = createYoga<{ principal: Principal; cacheNote: CacheNote }>({ schema, plugins: [useResponseCache() as never] });
    const ask = async (query: string) => {
      const cacheNote: CacheNote = {};
      const response = await yoga.fetch(
        new Request('http://gateway.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }),
        { principal: { subject: 'alice', scopes: new Set(['orders:read']) } as Principal, cacheNote },
      );
      return { body: await response.json(), note: cacheNote };
    };
    const me = await ask('{ me }');
    expect(me.body).toEqual({ data: { me: 'alice' } });
    expect(me.note.tags).toBeUndefined();
    const greeting = await ask('{ greeting }');
    expect(greeting.body).toEqual({ data: { greeting: 'hello' } });
    expect(greeting.note.tags).toContain('*');
  });
});
