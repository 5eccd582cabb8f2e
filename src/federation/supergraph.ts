import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { printSubgraphSchema } from '@apollo/subgraph';
import { composeServices } from '@theguild/federation-composition';
import { GraphQLError, parse } from 'graphql';
import { subgraphSchema } from '../schema/index.js';

/**
 * Composing the petstore with other services into one supergraph, as `npm
 * run supergraph` does and the router tests do: The Guild's composition
 * (@theguild/federation-composition, what Hive's schema registry and Hive
 * Gateway use), whose supergraph Hive Gateway, Apollo Router and Cosmo serve.
 */

export interface Subgraph {
  name: string;
  /** Its subgraph SDL, with its `@link` to the federation spec. */
  sdl: string;
  /** Where the router sends this subgraph's part of a query. */
  url: string;
}

export type Composition = { ok: true; supergraphSdl: string } | { ok: false; errors: string[] };

/** The petstore's own subgraph SDL, from the code (what `_service { sdl }` answers with FEDERATION=true). */
export const petstoreSdl = (): string => printSubgraphSchema(subgraphSchema());

/** The supergraph of `subgraphs`, or each composition error as one line: `[CODE] message`. */
export function composeSupergraph(subgraphs: readonly Subgraph[]): Composition {
  const services = [];
  const errors: string[] = [];
  for (const subgraph of subgraphs) {
    try {
      services.push({ name: subgraph.name, typeDefs: parse(subgraph.sdl), url: subgraph.url });
    } catch (error) {
      errors.push(`[INVALID_GRAPHQL] ${subgraph.name}: ${(error as Error).message}`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const result = composeServices(services);
  if (result.errors) return { ok: false, errors: result.errors.map(describeError) };
  return { ok: true, supergraphSdl: result.supergraphSdl };
}

function describeError(error: GraphQLError): string {
  const code = typeof error.extensions.code === 'string' ? error.extensions.code : 'COMPOSITION_ERROR';
  return `[${code}] ${error.message}`;
}

/**
 * A subgraph named on the command line as `name=SOURCE`: SOURCE is the subgraph's GraphQL
 * endpoint (its SDL read from `_service { sdl }`, and the router sends it queries there), or an
 * SDL file followed by `@` and the endpoint the router is to use (`reviews.graphql@http://reviews:4001/graphql`).
 */
export async function loadSubgraph(argument: string, cwd = process.cwd()): Promise<Subgraph> {
  const match = /^([A-Za-z_][\w-]*)=(.+)$/.exec(argument);
  if (!match) throw new Error(`--subgraph ${argument}: expected NAME=URL or NAME=FILE@URL`);
  const [, name, source] = match as unknown as [string, string, string];
  const file = /^(.+?)@(https?:\/\/.+)$/.exec(source);
  if (file) {
    const [, sdlFile, url] = file as unknown as [string, string, string];
    const sdl = await readFile(path.resolve(cwd, sdlFile), 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new Error(`--subgraph ${name}: cannot read ${sdlFile} (${error.code ?? error.message})`);
    });
    return { name, sdl, url };
  }
  if (!/^https?:\/\//.test(source)) {
    throw new Error(`--subgraph ${name}: ${source} is neither a URL nor FILE@URL (an SDL file needs the URL the router is to use)`);
  }
  return { name, sdl: await fetchSdl(name, source), url: source };
}

/** A running subgraph's SDL, from its `_service { sdl }`. */
async function fetchSdl(name: string, url: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new Error(`--subgraph ${name}: ${url} cannot be reached (${(error as Error).cause ?? (error as Error).message})`);
  }
  const body = (await response.json().catch(() => undefined)) as
    | { data?: { _service?: { sdl?: unknown } }; errors?: Array<{ message: string }> }
    | undefined;
  const sdl = body?.data?._service?.sdl;
  if (typeof sdl !== 'string') {
    const why = body?.errors?.[0]?.message ?? `HTTP ${response.status}`;
    throw new Error(`--subgraph ${name}: ${url} gave no subgraph SDL from { _service { sdl } } (${why}); is it a federation subgraph?`);
  }
  return sdl;
}
