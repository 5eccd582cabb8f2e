import { Environment, type FetchFunction, Network, RecordSource, Store } from 'relay-runtime';

/**
 * The Relay environment: the gateway's /graphql over fetch, and Relay's store, which keeps each
 * object once under its global id. The gateway's global id field is `nodeId` (its `id` is the spec's
 * int64 id), so the store is told to read that one: the compiler adds it to every selection of a Node
 * type (relay.config.json, schemaConfig.nodeInterfaceIdField).
 *
 * Settings come from the page's address: ?gateway=http://127.0.0.1:4000&token=<bearer token>&category=<id>.
 */
export const settings = new URLSearchParams(location.search);
const gateway = settings.get('gateway') ?? 'http://127.0.0.1:4000';
const token = settings.get('token');

const fetchGraphQL: FetchFunction = async (operation, variables) => {
  const response = await fetch(`${gateway}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: operation.text, operationName: operation.name, variables }),
  });
  return response.json();
};

export const environment = new Environment({
  network: Network.create(fetchGraphQL),
  store: new Store(new RecordSource()),
  // Objects without one (a connection, its edges) get an id of Relay's own from where they are.
  getDataID: (fieldValue) => (fieldValue as { nodeId?: string }).nodeId,
});
