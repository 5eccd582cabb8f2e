import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { useTestGateway } from '../support/gateway.js';
import { type GraphQLAnswer, postGraphQL } from '../support/http.js';
import { connectWebSocket } from '../support/subscriptions.js';

/**
 * TRUSTED_DOCUMENTS with the manifest GraphQL Code Generator writes for the typed documents of these
 * tests (test/generated/persisted-documents.json), as a frontend ships one with its build: `require`
 * runs only its documents, by id; `allow` also runs any text and Apollo's automatic persisted queries.
 */

const manifestFile = path.resolve('test/generated/persisted-documents.json');
const { documents } = loadConfig({ TRUSTED_DOCUMENTS: 'allow', TRUSTED_DOCUMENTS_MANIFESTS: manifestFile }).trustedDocuments;
const idOf = (operation: string) => [...documents].find(([, text]) => text.includes(`query ${operation}(`) || text.includes(`query ${operation} `))![0];
const petById = idOf('PetById');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const required = useTestGateway({ trustedDocuments: { mode: 'require', documents } });
const allowed = useTestGateway({ trustedDocuments: { mode: 'allow', documents } });
const off = useTestGateway();
let petId: string;

beforeAll(async () => {
  for (const gateway of [required, allowed]) {
    const category = await gateway.prisma.category.create({ data: { name: 'Trusted' } });
    petId = String((await gateway.prisma.pet.create({ data: { name: 'Rex', categoryId: category.id } })).id);
  }
});

const post = (baseUrl: string, body: Record<string, unknown>) => postGraphQL<GraphQLAnswer>(baseUrl, body as never);

describe('TRUSTED_DOCUMENTS=require', () => {
  it('runs a document of the manifest sent by its id, documentId or Apollo persisted query hash', async () => {
    const byId = await post(required.baseUrl, { documentId: petById, variables: { id: petId } });
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ pet: { id: petId, name: 'Rex' } });
    const byHash = await post(required.baseUrl, {
      variables: { id: petId },
      extensions: { persistedQuery: { version: 1, sha256Hash: petById.slice('sha256:'.length) } },
    });
    expect(byHash.body.data).toMatchObject({ pet: { name: 'Rex' } });
  });

  it('refuses any other text (FORBIDDEN); the exact text of a manifest document runs as its id', async () => {
    const answer = await post(required.baseUrl, { query: '{ pets { totalCount } }' });
    expect(answer.status).toBe(403);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(answer.body.errors?.[0]?.message).toContain('TRUSTED_DOCUMENTS=require');
    const trustedText = await post(required.baseUrl, { query: documents.get(petById)!, variables: { id: petId } });
    expect(trustedText.body.data).toMatchObject({ pet: { name: 'Rex' } });
  });

  it('holds over WebSocket too: a manifest document runs, any other text is FORBIDDEN', async () => {
    const socket = await connectWebSocket(`${required.baseUrl}/graphql`);
    try {
      const trusted = socket.subscribe(documents.get(petById)!, { id: petId });
      expect((await trusted.next()).data).toMatchObject({ pet: { name: 'Rex' } });
      const other = socket.subscribe('{ pets { totalCount } }');
      const ending = await other.ended;
      expect(ending).toMatchObject({ kind: 'error' });
      expect(JSON.stringify(ending)).toContain('FORBIDDEN');
    } finally {
      await socket.dispose();
    }
  });

  it('answers an unknown id PERSISTED_QUERY_NOT_FOUND, and a request with neither id nor text VALIDATION_FAILED', async () => {
    const unknown = await post(required.baseUrl, { documentId: `sha256:${sha256('{ pets { totalCount } }')}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND', status: 404 });
    const empty = await post(required.baseUrl, { variables: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
  });
});

describe('TRUSTED_DOCUMENTS=allow', () => {
  it('runs any text, and the manifest by id', async () => {
    expect((await post(allowed.baseUrl, { query: '{ pets { totalCount } }' })).body).toEqual({ data: { pets: { totalCount: 1 } } });
    expect((await post(allowed.baseUrl, { documentId: petById, variables: { id: petId } })).body.data).toMatchObject({ pet: { name: 'Rex' } });
  });

  it("speaks Apollo's automatic persisted queries: unknown hash, then hash with text, then hash alone", async () => {
    const query = 'query CountPets { pets { totalCount } }';
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const first = await post(allowed.baseUrl, { extensions: { persistedQuery } });
    expect(first.body.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' });
    expect(first.body.errors?.[0]?.message).toMatch(/^PersistedQueryNotFound/);
    const registering = await post(allowed.baseUrl, { query, extensions: { persistedQuery } });
    expect(registering.body).toEqual({ data: { pets: { totalCount: 1 } } });
    const byHash = await post(allowed.baseUrl, { extensions: { persistedQuery } });
    expect(byHash.body).toEqual({ data: { pets: { totalCount: 1 } } });
    // A document run by its hash costs what its text does.
    expect(byHash.cost).toMatchObject({ estimated: 6, actual: 6 });
  });

  it('refuses a text whose hash is not the one it claims, and registers nothing', async () => {
    const claimed = sha256('query Other { categories { totalCount } }');
    const answer = await post(allowed.baseUrl, { query: '{ pets { totalCount } }', extensions: { persistedQuery: { version: 1, sha256Hash: claimed } } });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
    const later = await post(allowed.baseUrl, { extensions: { persistedQuery: { version: 1, sha256Hash: claimed } } });
    expect(later.body.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' });
  });
});

describe('TRUSTED_DOCUMENTS=off', () => {
  it("answers a document named by id alone PERSISTED_QUERY_NOT_SUPPORTED, which tells APQ clients to send the text from now on", async () => {
    const query = 'query CountPets { pets { totalCount } }';
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    for (const body of [{ extensions: { persistedQuery } }, { documentId: `sha256:${persistedQuery.sha256Hash}` }]) {
      const answer = await post(off.baseUrl, body);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_NOT_SUPPORTED', status: 400 });
      expect(answer.body.errors?.[0]?.message).toMatch(/^PersistedQueryNotSupported/);
    }
    // As Apollo's link sends a hashed query by GET.
    const url = new URL('/graphql', off.baseUrl);
    url.searchParams.set('extensions', JSON.stringify({ persistedQuery }));
    const byGet = await fetch(url, { headers: { accept: 'application/graphql-response+json' } });
    expect(byGet.status).toBe(400);
    expect(((await byGet.json()) as GraphQLAnswer).errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_NOT_SUPPORTED' });
    // The text, with or without its hash, runs; so does a request that carries neither (VALIDATION_FAILED, as before).
    expect((await post(off.baseUrl, { query, extensions: { persistedQuery } })).body).toEqual({ data: { pets: { totalCount: 0 } } });
    expect((await post(off.baseUrl, { query })).body).toEqual({ data: { pets: { totalCount: 0 } } });
    expect((await post(off.baseUrl, { variables: {} })).body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('says the same over WebSocket', async () => {
    const socket = await connectWebSocket(`${off.baseUrl}/graphql`);
    try {
      const byHash = socket.subscribe('', undefined, { persistedQuery: { version: 1, sha256Hash: sha256('{ pets { totalCount } }') } });
      const ending = await byHash.ended;
      expect(ending).toMatchObject({ kind: 'error' });
      expect(JSON.stringify(ending)).toContain('PERSISTED_QUERY_NOT_SUPPORTED');
    } finally {
      await socket.dispose();
    }
  });
});

describe('the settings', () => {
  it('read the manifest, and refuse require without one, a file that is not JSON, or an id that is not its hash', () => {
    expect(documents.size).toBe(Object.keys(JSON.parse(readFileSync(manifestFile, 'utf8'))).length);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'require' })).toThrow(/TRUSTED_DOCUMENTS=require needs TRUSTED_DOCUMENTS_MANIFESTS/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'sometimes' })).toThrow(/TRUSTED_DOCUMENTS must be off, allow/);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'allow', TRUSTED_DOCUMENTS_MANIFESTS: 'package-lock.json,README.md' })).toThrow(
      /TRUSTED_DOCUMENTS_MANIFESTS: README.md cannot be read as JSON/,
    );
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'allow', TRUSTED_DOCUMENTS_MANIFESTS: 'contract/release.json' })).toThrow(
      /is not sha256:<the SHA-256 of its document's text>/,
    );
  });
});
