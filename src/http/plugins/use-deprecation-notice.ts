import type { ExecutionArgs } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../../builder.js';
import { sunsetDateIn, sunsetStart } from '../../deprecation.js';
import { LEGACY_FIELD, type LegacyPolicy } from '../../legacy.js';
import { type OperationFacts, operationFacts } from './operation-facts.js';

/** One deprecated field an answer used, as `extensions.deprecations` lists it. */
export interface DeprecationEntry {
  /** `Type.field` */
  field: string;
  reason: string;
  /** The day it goes away (YYYY-MM-DD), when its deprecation names one. */
  sunset: string | null;
}

/** What an operation's answers say about the deprecated fields it uses; worked out once per document. */
interface Notice {
  deprecations: DeprecationEntry[];
  deprecatedAt?: Date;
  sunsetAt?: Date;
}

/**
 * Tells callers in every answer that they use deprecated fields, so client
 * tools and logs show it without anyone reading the schema: the answer's
 * `extensions.deprecations` lists each field with its reason and sunset date,
 * and the HTTP response carries `Deprecation` (RFC 9745) and `Sunset` (RFC
 * 8594) for the earliest of them. The legacy lookup's dates are the legacy
 * policy's; another deprecated field's sunset date is the one its reason
 * names. Subscriptions get the headers (over SSE), not the extension.
 */
export function useDeprecationNotice(legacy: LegacyPolicy): Plugin<GraphQLContext & { request?: Request }> {
  const notices = new WeakMap<OperationFacts, Notice>();
  const byRequest = new WeakMap<Request, Notice[]>();

  const noticeOf = (facts: OperationFacts): Notice | undefined => {
    if (facts.deprecated.length === 0) return undefined;
    let notice = notices.get(facts);
    if (!notice) {
      notice = { deprecations: [] };
      for (const { field, reason } of facts.deprecated) {
        if (notice.deprecations.some((entry) => entry.field === field)) continue;
        const sunset = field === LEGACY_FIELD ? legacy.sunsetDate : (sunsetDateIn(reason) ?? null);
        notice.deprecations.push({ field, reason, sunset });
        const deprecatedAt = field === LEGACY_FIELD ? legacy.deprecatedAt : undefined;
        const sunsetAt = field === LEGACY_FIELD ? legacy.sunsetAt : sunset === null ? undefined : sunsetStart(sunset);
        notice.deprecatedAt = earliest(notice.deprecatedAt, deprecatedAt);
        notice.sunsetAt = earliest(notice.sunsetAt, sunsetAt);
      }
      notices.set(facts, notice);
    }
    return notice;
  };

  const remember = (args: ExecutionArgs) => {
    const notice = noticeOf(operationFacts(args.schema, args.document, args.operationName));
    const request = (args.contextValue as { request?: Request }).request;
    // A batch answers several operations in one response: its headers speak for all of them.
    if (notice && request) byRequest.set(request, [...(byRequest.get(request) ?? []), notice]);
    return notice;
  };

  return {
    onExecute({ args }) {
      const notice = remember(args);
      if (!notice) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) return;
          setResult({ ...result, extensions: { ...result.extensions, deprecations: notice.deprecations } });
        },
      };
    },
    onSubscribe({ args }) {
      remember(args);
    },
    onResponse({ request, response }) {
      const used = byRequest.get(request);
      if (!used) return;
      const deprecatedAt = used.reduce<Date | undefined>((found, notice) => earliest(found, notice.deprecatedAt), undefined);
      const sunsetAt = used.reduce<Date | undefined>((found, notice) => earliest(found, notice.sunsetAt), undefined);
      if (deprecatedAt) response.headers.set('Deprecation', `@${Math.floor(deprecatedAt.getTime() / 1000)}`);
      if (sunsetAt) response.headers.set('Sunset', sunsetAt.toUTCString());
    },
  };
}

const earliest = (a: Date | undefined, b: Date | undefined) => (a === undefined || (b !== undefined && b < a) ? b : a);
