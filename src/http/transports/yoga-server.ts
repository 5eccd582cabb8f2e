import { type Plugin, YogaServer, type YogaServerOptions } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../types.js';

/**
 * Yoga's GraphQL server, answering each HTTP request hono hands it: the server's own `handle`
 * (request parsing, the document by id, the whole envelop pipeline with every plugin, result
 * processing), between the hooks its plugins have on the HTTP request and response (`onRequest`,
 * `onResponse`), as yoga's generic server adapter (@whatwg-node/server) would run them.
 *
 * Why not the adapter itself: for every request it copies the server context, descriptor by
 * descriptor, onto a new object (its `isolateObject`), which leaves V8 a dictionary-mode object as
 * the GraphQL context, and every write to it after (yoga's `request` and `params`, the context
 * factory, the plugins) slow. With it, a request spent 0.12 ms of CPU more in yoga than without
 * (docs/performance.md, "One front door"). Hono already gives each request a context object of its
 * own, so there is nothing to isolate; hono routes, so the adapter's routing has nothing to do.
 * test/graphql/yoga-server.test.ts answers the same requests here and through the adapter and
 * checks every answer alike (status, headers, body).
 */
export interface GraphQLServer<UserContext extends object = GraphQLContext> {
  /** One HTTP request to the GraphQL endpoint, with the gateway's context of it. */
  handle(request: Request, context: RequestContext): Promise<Response>;
  /** The envelop pipeline, for transports that read their own requests (WebSocket). */
  readonly getEnveloped: YogaServer<RequestContext, UserContext>['getEnveloped'];
  readonly graphqlEndpoint: string;
}

type ServerContext = RequestContext & { waitUntil(promise: Promise<unknown> | void): void };
type Hooks = Plugin<object, ServerContext>;

/** What an `onRequest` hook is given: the request, and ways to answer or handle it otherwise. */
class RequestHooksPayload<Handler> {
  response: Response | undefined;
  #url: URL | undefined;
  constructor(
    public request: Request,
    readonly serverContext: ServerContext,
    readonly fetchAPI: unknown,
    public requestHandler: Handler,
  ) {}
  /**
   * Parsed when a property of it is first read, as yoga's own request parser does: plugins take it out
   * of the payload in their parameter lists (yoga's unhandled-route check among them) on every request,
   * most of them to read it only when the request's URL does not already say it is for them.
   */
  get url(): URL {
    return (this.#url ??= lazyUrl(this.request.url));
  }
  // Arrow functions: plugins take them out of the payload (`{ endResponse }`).
  setRequest = (request: Request) => {
    this.request = request;
    this.#url = undefined;
  };
  setRequestHandler = (handler: Handler) => {
    this.requestHandler = handler;
  };
  endResponse = (response: Response) => {
    this.response = response;
  };
}

function lazyUrl(href: string): URL {
  let parsed: URL | undefined;
  return new Proxy(Object.create(URL.prototype) as URL, {
    get(_target, property) {
      parsed ??= new URL(href, 'http://localhost');
      const value: unknown = Reflect.get(parsed, property, parsed);
      return typeof value === 'function' ? value.bind(parsed) : value;
    },
  });
}

export function createGraphQLServer<UserContext extends object = GraphQLContext>(
  options: YogaServerOptions<RequestContext, UserContext>,
  logger: Logger,
): GraphQLServer<UserContext> {
  const server = new YogaServer<RequestContext, UserContext>(options);
  // Every plugin, yoga's own and those the plugins added, as yoga's adapter reads them.
  const plugins = (server as unknown as { plugins: Array<Hooks | undefined | false> }).plugins.filter((plugin): plugin is Hooks => Boolean(plugin));
  const onRequest = plugins.flatMap((plugin) => (plugin.onRequest ? [plugin.onRequest] : []));
  const onResponse = plugins.flatMap((plugin) => (plugin.onResponse ? [plugin.onResponse] : []));
  const { fetchAPI } = server;
  // Work a plugin hands on to finish after the answer (none of ours does): its failure is logged, never thrown.
  const waitUntil = (promise: Promise<unknown> | void) => {
    promise?.catch((error: unknown) => logger.error({ err: error }, 'work after a GraphQL answer failed'));
  };
  const handle = (request: Request, context: ServerContext) => server.handle(request, context) as Promise<Response> | Response;

  return {
    getEnveloped: server.getEnveloped,
    graphqlEndpoint: server.graphqlEndpoint,
    async handle(original, requestContext) {
      const context = requestContext as ServerContext;
      context.waitUntil = waitUntil;
      let response: Response;
      // One payload for every hook of the request, as a plugin sees it.
      const before = new RequestHooksPayload(original, context, fetchAPI, handle);
      for (const hook of onRequest) {
        const done = hook(before as never);
        if (done) await done;
        if (before.response) break;
      }
      response = before.response ?? (await before.requestHandler(before.request, context));
      if (onResponse.length > 0) {
        const after = {
          request: before.request,
          serverContext: context,
          response,
          setResponse: (next: Response) => {
            after.response = next;
          },
          fetchAPI,
        };
        for (const hook of onResponse) {
          const done = hook(after);
          if (done) await done;
        }
        response = after.response;
      }
      return response;
    },
  };
}

