import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { RequestContext } from '../types.js';

/**
 * Yoga takes a POST's GraphQL parameters as the plans' front (serve.ts) already read and parsed
 * them, instead of reading a copy of the body and parsing it again (a web Request per write
 * request, and the body's bytes through a stream: 6-7% of a mutation's CPU). Only where yoga chose
 * its JSON parser for the request itself: any other request it refuses or reads as before.
 */
export function useReadBody(): Plugin<object, RequestContext> {
  return {
    onRequestParse({ serverContext, requestParser, setRequestParser }) {
      const params = serverContext.bodyParams;
      if (params && requestParser) setRequestParser(() => params as GraphQLParams);
    },
  };
}
