import { Response as StringBodyResponse } from '@whatwg-node/fetch';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { GatewayEnv } from './types.js';

/**
 * How yoga's answers go out through hono. Whole answers (a JSON result) go out
 * as a hono string body: one write (node-server's fast path, which the headers
 * the middlewares add after the handler keep), where yoga's own Response object
 * would be read back through a web stream. Streamed ones (SSE, multipart) are
 * passed on as they are.
 */
const WHOLE_ANSWER = /^application\/(graphql-response\+)?json\b/;

export const isWholeAnswer = (contentType: string) => WHOLE_ANSWER.test(contentType);

/**
 * The Response yoga makes its answers with. A body given whole as a string (every JSON answer,
 * GraphiQL's page, a refusal) is kept as the string, in @whatwg-node/fetch's Response, whose
 * `text()` gives it back as it is; Node's own would encode it into a web stream here and decode
 * it again in `passOn`. Any other body (a stream: SSE, multipart) makes Node's own Response,
 * which hono writes as it streams (a stream of the other kind, wrapped by hono, stops the process
 * when the client goes away).
 */
export const AnswerResponse = function AnswerResponse(body?: BodyInit | null, init?: ResponseInit): Response {
  return typeof body === 'string' ? (new StringBodyResponse(body, init) as unknown as Response) : new Response(body, init);
} as unknown as typeof Response;
Object.assign(AnswerResponse, { json: Response.json, error: Response.error, redirect: Response.redirect });

export async function passOn(c: Context<GatewayEnv>, response: Response) {
  // Not Node's own: its body is a string, which goes out as a whole answer does.
  if (isWholeAnswer(response.headers.get('content-type') ?? '') || !(response instanceof Response)) {
    return wholeAnswer(c, response, await response.text());
  }
  return response;
}

/** Yoga's whole answer, already read as `text`, with its status and headers. */
export function wholeAnswer(c: Context<GatewayEnv>, response: Response, text: string) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return c.body(text, response.status as ContentfulStatusCode, headers);
}
