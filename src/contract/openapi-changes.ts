import { apiCompare, type Diff } from 'api-smart-diff';
import {
  type ChangeKind,
  type ContractChange,
  deprecationNoticeProblem,
  type Exemption,
  sunsetDateIn,
  sunsetHasPassed,
} from './policy.js';

/**
 * The changes between two OpenAPI 3 documents, found and classified by
 * api-smart-diff (which resolves $refs, so a change to a shared schema shows
 * at every operation that answers with it), then judged by the policy.
 *
 * Two classifications are made stricter for answers: api-smart-diff judges a
 * response schema as a set of accepted values, so a changed `type` or a
 * removed optional property counts as safe there; for a caller that reads the
 * field either one breaks it. A new enum value in an answer is dangerous, as
 * GraphQL Inspector calls a new enum value (api-smart-diff: breaking). A
 * change to `servers` counts for more than a text (see kindOf).
 */

type Json = Record<string, unknown>;
type Operation = { deprecated?: boolean; 'x-sunset'?: string; 'x-stability'?: string };

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const UNSTABLE_LEVELS = new Set(['experimental', 'beta']);

export function openApiChanges(baseline: object, current: object, now = Date.now()): ContractChange[] {
  const { diffs } = apiCompare(structuredClone(baseline), structuredClone(current));
  const changes: ContractChange[] = [];
  for (const diff of diffs) {
    // Components are compared where operations use them (api-smart-diff resolves every $ref).
    if (diff.path[0] === 'components') continue;
    const kind = kindOf(diff);
    const exemption = kind === 'breaking' ? exemptionOf(baseline as Json, diff.path, now) : undefined;
    changes.push({
      contract: 'OpenAPI',
      kind,
      where: whereOf(diff.path),
      message: diff.description ?? `${diff.action} ${diff.path.join('/')}`,
      ...(exemption ? { exemption } : {}),
    });
  }
  return [...changes, ...deprecationNoticeBreaches(baseline as Json, current as Json, now)];
}

function kindOf(diff: Diff): ChangeKind {
  // api-smart-diff calls `servers` metadata, a text; clients generated from the document take their
  // base address from it, so a new server is something new, and a changed or removed one may move them.
  if (diff.path[0] === 'servers' && diff.path.at(-1) !== 'description') return diff.action === 'add' ? 'addition' : 'dangerous';
  const inAnswer = responseSchemaPath(diff.path);
  if (inAnswer) {
    const last = inAnswer.at(-1);
    if (last === 'type' && diff.action === 'replace') return 'breaking';
    if (inAnswer.at(-2) === 'properties' && diff.action === 'remove') return 'breaking';
    if (inAnswer.at(-2) === 'enum' && diff.action === 'add') return 'dangerous';
  }
  switch (diff.type) {
    case 'breaking':
      return 'breaking';
    case 'unclassified':
      return 'dangerous';
    case 'annotation':
      return 'annotation';
    default:
      return 'addition';
  }
}

/** The path inside a response body's schema, or undefined when the diff is elsewhere. */
function responseSchemaPath(path: ReadonlyArray<string | number>) {
  const [paths, , , responses, , content, , schema] = path;
  const inSchema = paths === 'paths' && responses === 'responses' && content === 'content' && schema === 'schema';
  return inSchema ? path.slice(8) : undefined;
}

/** `GET /pets/{petId}` and where in the operation, or the document's own path. */
function whereOf(path: ReadonlyArray<string | number>): string {
  const [root, route, method, ...rest] = path;
  if (root !== 'paths' || typeof route !== 'string') return path.join('/');
  if (typeof method !== 'string' || !METHODS.has(method)) return [route, method, ...rest].filter((part) => part !== undefined).join(' ');
  return [`${method.toUpperCase()} ${route}`, rest.join('/')].filter(Boolean).join(' ');
}

function exemptionOf(baseline: Json, path: ReadonlyArray<string | number>, now: number): Exemption | undefined {
  const [root, route, method] = path;
  if (root !== 'paths' || typeof route !== 'string') return undefined;
  const pathItem = ((baseline.paths ?? {}) as Record<string, Record<string, Operation>>)[route];
  if (!pathItem) return undefined;
  // A whole path removed is let through only when each of its operations would be.
  const methods = typeof method === 'string' && METHODS.has(method) ? [method] : Object.keys(pathItem).filter((key) => METHODS.has(key));
  const found = methods.map((name) => operationExemption(`${name.toUpperCase()} ${route}`, pathItem[name], now));
  if (found.length === 0 || found.some((exemption) => exemption === undefined)) return undefined;
  return found[0];
}

function operationExemption(element: string, operation: Operation | undefined, now: number): Exemption | undefined {
  if (!operation) return undefined;
  const sunsetDate = sunsetDateIn(operation['x-sunset']);
  if (operation.deprecated === true && sunsetDate !== undefined && sunsetHasPassed(sunsetDate, now)) {
    return { reason: 'retired', element, sunsetDate };
  }
  const level = operation['x-stability'];
  return level && UNSTABLE_LEVELS.has(level) ? { reason: 'unstable', element, level } : undefined;
}

/** Operations newly deprecated since the baseline must name a sunset date (`x-sunset`) far enough ahead. */
function deprecationNoticeBreaches(baseline: Json, current: Json, now: number): ContractChange[] {
  const breaches: ContractChange[] = [];
  const released = (baseline.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [route, pathItem] of Object.entries((current.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!METHODS.has(method) || operation.deprecated !== true || released[route]?.[method]?.deprecated === true) continue;
      const element = `${method.toUpperCase()} ${route}`;
      const problem = deprecationNoticeProblem(element, sunsetDateIn(operation['x-sunset']), now);
      if (problem) breaches.push({ contract: 'OpenAPI', kind: 'breaking', where: element, message: problem });
    }
  }
  return breaches;
}
