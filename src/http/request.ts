/** Reading what every transport reads the same way: the request id a client sends, and its bearer token. */

/** The X-Request-Id values taken as they are (also the OpenAPI document's pattern); any other is replaced. */
export const REQUEST_ID_PATTERN = '^[\\w.:-]{1,128}$';
const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

/** The request id to use: the client's own when it is 1–128 of letters, digits and `. _ : -`, else a new one. */
export function requestIdFrom(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** The token of an `Authorization: Bearer <token>` value; undefined when the value has another form. */
export function bearerToken(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}
