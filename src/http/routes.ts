/** Where the gateway answers; every transport, link and document names these. */
export const GRAPHQL_PATH = '/graphql';
export const OPENAPI_PATH = '/openapi.json';
