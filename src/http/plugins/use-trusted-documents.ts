import { createHash } from 'node:crypto';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { CacheBounds, TrustedDocumentsSettings } from '../../config.js';
import { boundedCache, type CacheMetrics } from '../../observability/caches.js';
import { DomainError, toGraphQLError } from '../../errors.js';

/**
 * Trusted documents (TRUSTED_DOCUMENTS), with yoga's persisted-operations plugin:
 *
 * - `require`: only the documents of the manifests a frontend shipped with its build
 *   (GraphQL Code Generator's persisted-documents.json), sent by id (or as their exact text); any
 *   other text is FORBIDDEN and an unknown id PERSISTED_QUERY_NOT_FOUND. Over WebSocket too.
 * - `allow`: ids or full text. An id is looked up in the manifests, then among the documents
 *   registered by Apollo's automatic persisted queries: a client sends the hash alone, gets
 *   PERSISTED_QUERY_NOT_FOUND for an unknown one, and sends it again with the text, which is
 *   checked against the hash and kept (least recently used first out, within `registered`).
 *
 * An id is the GraphQL-over-HTTP draft's `documentId` (`sha256:<hex>`) or Apollo's
 * `extensions.persistedQuery.sha256Hash` (`<hex>`, version 1).
 */
export interface TrustedDocumentsOptions extends TrustedDocumentsSettings {
  mode: 'allow' | 'require';
  /** Documents registered through automatic persisted queries that are kept (allow mode), by count and by size. */
  registered?: CacheBounds;
  caches?: CacheMetrics;
}

type Params = GraphQLParams & { documentId?: unknown };

/** The document id a request names, as `sha256:<hex>`, if any. */
function documentIdOf(params: Params): string | null {
  if (typeof params.documentId === 'string') return params.documentId;
  const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)
    ?.persistedQuery;
  // Plain hex as Apollo sends it, or already prefixed as GraphQL Code Generator's ids are.
  if (persisted?.version === 1 && typeof persisted.sha256Hash === 'string') {
    return persisted.sha256Hash.startsWith('sha256:') ? persisted.sha256Hash : `sha256:${persisted.sha256Hash}`;
  }
  return null;
}

const hashOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const onlyTrusted = () =>
  new DomainError(
    'FORBIDDEN',
    'Only trusted documents are run here (TRUSTED_DOCUMENTS=require): send the id of a document of the ' +
      'deployed manifests (documentId), or its exact text.',
  );

/**
 * With TRUSTED_DOCUMENTS=off no document is taken by id: a request naming one without its text is told
 * so in the code automatic persisted queries' clients (Apollo's link, urql's exchange) read as "send the
 * text from now on", rather than that it has no query.
 */
const notSupported = () =>
  new DomainError(
    'PERSISTED_QUERY_NOT_SUPPORTED',
    'PersistedQueryNotSupported: documents are not taken by id here (TRUSTED_DOCUMENTS=off); send the text (query).',
  );

/**
 * The text of a graphql-ws operation: a manifest document named by id (`documentId` or Apollo's
 * persistedQuery hash in its extensions, the text then left empty), else the text it carries, which
 * under `require` must be a manifest document's. A DomainError when it may not run. Without trusted
 * documents (`settings` undefined) only text is run.
 */
export function webSocketDocument(
  settings: TrustedDocumentsSettings | undefined,
  payload: { query: string; extensions?: unknown; documentId?: unknown },
): string | DomainError {
  const id = documentIdOf({ ...payload, extensions: payload.extensions as GraphQLParams['extensions'] });
  if (!settings) return id !== null && payload.query === '' ? notSupported() : payload.query;
  const { mode, documents } = settings;
  if (id !== null && payload.query === '') {
    return documents.get(id) ?? new DomainError('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound: no trusted document has this id.');
  }
  return mode === 'require' && !documents.has(hashOf(payload.query)) ? onlyTrusted() : payload.query;
}

const refusal = (code: 'FORBIDDEN' | 'PERSISTED_QUERY_NOT_FOUND' | 'VALIDATION_FAILED', message: string) => () =>
  toGraphQLError(new DomainError(code, message));

export function useTrustedDocuments({
  mode,
  documents,
  registered: bounds = { maxEntries: 1_000, maxBytes: 8_000_000 },
  caches,
}: TrustedDocumentsOptions): Plugin {
  const registered = boundedCache<string, string>('persisted_queries', bounds, caches, { sizeOf: (text, id) => text.length + id.length });
  return {
    onPluginInit({ addPlugin }) {
      addPlugin({
        // Before the persisted-operations plugin: an automatic persisted query that brings its text
        // registers it, once the text is shown to have the hash it claims.
        onParams({ params, setParams }) {
          if (typeof params.query !== 'string') return;
          const id = documentIdOf(params as Params);
          const hash = hashOf(params.query);
          if (mode === 'require') {
            // A manifest's document sent as text is as trusted as by id: run by its id.
            if (documents.has(hash)) setParams({ ...params, query: undefined, documentId: hash } as GraphQLParams);
            return;
          }
          if (id === null) return;
          if (hash !== id) {
            throw toGraphQLError(
              new DomainError('VALIDATION_FAILED', `The document's SHA-256 is ${hash}, not the ${id} the request names.`),
            );
          }
          registered.set(id, params.query);
        },
      });
      addPlugin(
        usePersistedOperations({
          allowArbitraryOperations: mode === 'allow',
          extractPersistedOperationId: (params) => documentIdOf(params as Params),
          getPersistedOperation: (id) => documents.get(id) ?? (mode === 'allow' ? (registered.get(id) ?? null) : null),
          customErrors: {
            notFound: refusal(
              'PERSISTED_QUERY_NOT_FOUND',
              mode === 'allow'
                ? 'PersistedQueryNotFound: no document has this id; send it again with its text (query).'
                : 'PersistedQueryNotFound: no trusted document has this id; deploy the manifest that has it.',
            ),
            persistedQueryOnly: () => toGraphQLError(onlyTrusted()),
            keyNotFound: refusal('VALIDATION_FAILED', 'Must provide a query, or the id of a trusted document (documentId).'),
          },
        }),
      );
    },
  };
}

/** TRUSTED_DOCUMENTS=off: a request that names a document by id and carries no text is PERSISTED_QUERY_NOT_SUPPORTED. */
export function usePersistedQueriesUnsupported(): Plugin {
  return {
    onParams({ params }) {
      if (typeof params.query === 'string' && params.query !== '') return;
      if (documentIdOf(params as Params) !== null) throw toGraphQLError(notSupported());
    },
  };
}
