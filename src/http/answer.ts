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

export async function passOn(c: Context<GatewayEnv>, response: Response) {
  if (!isWholeAnswer(response.headers.get('content-type') ?? '')) return response;
  return wholeAnswer(c, response, await response.text());
}

/** Yoga's whole answer, already read as `text`, with its status and headers. */
export function wholeAnswer(c: Context<GatewayEnv>, response: Response, text: string) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return c.body(text, response.status as ContentfulStatusCode, headers);
}
