import { createHash, randomUUID } from 'node:crypto';
import { type BuildResponseCacheKeyFunction, type Cache, createInMemoryCache, useResponseCache } from '@envelop/response-cache';
import { getOperationAST } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { Redis } from 'ioredis';
import type { GraphQLContext } from '../../builder.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../types.js';

export interface ResponseCacheOptions {
  /** How long an answer may be served from the cache; it is dropped sooner by any write. */
  ttlMs: number;
  /** Answers kept per instance, least recently used dropped first. */
  maxEntries: number;
  /**
   * With Redis, the write generation lives there (under `generationKey`), so a
   * write through one instance is seen by the caches of all of them.
   */
  redis?: Redis;
  generationKey: string;
  logger: Pick<Logger, 'warn'>;
  /** Counts lookups by outcome (`hit` or `miss`). */
  countLookup?: (result: 'hit' | 'miss') => void;
}

/**
 * Which writes an answer has seen. Every cache key holds the generation read
 * when its request began, and every mutation moves the generation on before
 * its answer is sent; so once a write has answered, no request can find an
 * answer computed before it. This holds for answers that name no entity at
 * all (an empty list, a bare totalCount), which invalidation by the entities
 * a mutation returns would miss, and for a read that started before the write
 * and stores its answer after it: that answer sits under the old generation,
 * where nobody looks any more.
 */
interface WriteGeneration {
  current(): Promise<string> | string;
  advance(): Promise<void> | void;
}

/** How long a generation read from Redis may take before the request goes uncached. */
const REDIS_GENERATION_TIMEOUT_MS = 200;

function writeGeneration(options: ResponseCacheOptions): WriteGeneration {
  // Moved by this instance's own writes: even when Redis cannot be told about a
  // write, this instance never serves an answer from before it.
  let local = 0;
  const { redis, generationKey, logger } = options;
  if (!redis) {
    return {
      current: () => String(local),
      advance: () => {
        local += 1;
      },
    };
  }
  const withTimeout = <T>(command: Promise<T>) =>
    Promise.race([
      command,
      new Promise<never>((_, reject) => {
        setTimeout(() => reject(new Error('Redis did not answer in time')), REDIS_GENERATION_TIMEOUT_MS).unref();
      }),
    ]);
  return {
    async current() {
      try {
        return `${(await withTimeout(redis.get(generationKey))) ?? 0}.${local}`;
      } catch (error) {
        // Without the shared generation nobody can tell what is current: a key of its
        // own makes this request a miss (and its answer one nobody will find).
        logger.warn({ err: error }, 'Redis unreachable; answering without the response cache');
        return `unknown:${randomUUID()}`;
      }
    },
    async advance() {
      local += 1;
      try {
        await withTimeout(redis.incr(generationKey));
      } catch (error) {
        logger.warn(
          { err: error },
          'Redis unreachable; other instances may serve cached answers from before this write until they expire',
        );
      }
    },
  };
}

/**
 * The key of one answer: the request and the generation, hashed at once (the
 * plugin's default hashes through WebCrypto, a round trip through a promise).
 * Variables are not sorted: the same variables in another order are a miss,
 * never a wrong answer.
 */
function answerKey(generation: string, params: Parameters<BuildResponseCacheKeyFunction>[0]): string {
  return createHash('sha256')
    .update(`${generation}\0${params.operationName ?? ''}\0${JSON.stringify(params.variableValues ?? {})}\0`)
    .update(params.documentString)
    .digest('base64url');
}

function isMutation(args: { document: Parameters<typeof getOperationAST>[0]; operationName?: string | null }) {
  return getOperationAST(args.document, args.operationName)?.operation === 'mutation';
}

/**
 * A response cache (@envelop/response-cache) for anonymous reads: the public
 * catalogue and stock. Requests with a token are never cached nor served from
 * the cache, so what depends on the caller's scopes is never shared. Answers
 * with errors are not kept.
 *
 * It sits in the execution phase, after parsing, validation and the query
 * limits, so a cached answer is only given to a request that would be allowed
 * to run, and the operation is still named and counted for the metrics.
 */
/** No subject and no scope: what such a caller sees is what every anonymous caller sees. The cache keeps only these. */
export const isAnonymous = ({ principal }: Pick<GraphQLContext, 'principal'>) =>
  principal.subject === undefined && principal.scopes.size === 0;

export function useAnonymousResponseCache(options: ResponseCacheOptions): Plugin<GraphQLContext & RequestContext> {
  const generation = writeGeneration(options);
  const answers = createInMemoryCache({ max: options.maxEntries });
  const counted: Cache = options.countLookup
    ? {
        get(key) {
          const answer = answers.get(key) as Awaited<ReturnType<Cache['get']>>;
          options.countLookup?.(answer ? 'hit' : 'miss');
          return answer;
        },
        set: (...args) => answers.set(...args),
        invalidate: (entities) => answers.invalidate(entities),
      }
    : answers;
  // An answer delivered in parts (@defer, @stream) is not kept: the cache would keep its first part
  // alone and serve that as the whole answer. (A directive's name may follow its @ after blanks; a
  // false match, in a string or comment, only leaves an answer uncached.)
  const isIncremental = ({ params }: YogaInitialContext) => /@\s*(defer|stream)\b/.test(params.query ?? '');
  const cache = useResponseCache<YogaInitialContext & GraphQLContext & RequestContext>({
    cache: counted,
    ttl: options.ttlMs,
    enabled: (context) => isAnonymous(context) && !isIncremental(context),
    session: () => null,
    // Writes move the generation instead (below): entity invalidation cannot see lists a
    // new pet joins, nor answers without entities.
    invalidateViaMutation: false,
    buildResponseCacheKey: (params) => {
      const current = generation.current();
      return typeof current === 'string' ? answerKey(current, params) : current.then((g) => answerKey(g, params));
    },
    // The plugin's default also writes a console line for every answer with errors.
    shouldCacheResult: ({ result }) => !result.errors?.length,
    // Hit or miss is not the client's business; the metric tells operators.
    includeExtensionMetadata: false,
  });
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(cache);
    },
    onExecute({ args }) {
      if (!isMutation(args)) return;
      // Every mutation, even one refused: a write that committed and then failed to
      // answer must not leave answers from before it in the cache.
      return { onExecuteDone: () => generation.advance() };
    },
  };
}
