import { LRUCache } from 'lru-cache';

type Row = Record<string, unknown>;

/** A statement of the gateway's own (find-many.ts): its text, its parameters, and how its rows are read. */
export interface Statement {
  sql: string;
  params: unknown[];
  /** The statement's rows (each an array of its columns' values, as pg's rowMode 'array' gives them) as Prisma's findMany would have answered. */
  decode(rows: ReadonlyArray<readonly unknown[]>): Row[];
  /** With `withTotalUpTo`: how many rows the read's `where` matches (up to that many), carried by every row; undefined when the page has none. */
  total(rows: ReadonlyArray<readonly unknown[]>): number | undefined;
}

/**
 * The texts of the gateway's own statements (find-many.ts), kept by the structure of the read each
 * answers: its select, order, page and the shape of its filters, with the values a statement binds
 * (ids, cursors, searched text) left out. Building a text walks the read and writes every column,
 * join and condition again; its structure is one short walk. Bounded by entries (a text is at most
 * a few kilobytes), shared by the pools as their statement names are, reported as
 * `statement_templates`.
 */
export interface StatementTemplates {
  /**
   * The statement of a read (`kind` names what else its text depends on: the model, a count's
   * limit): the kept template's text with this read's values, or else what `build` makes of it
   * (undefined: the read goes through Prisma), kept for the next read of its structure.
   */
  statementOf(kind: string, args: object, build: () => Statement | undefined): Statement | undefined;
  readonly size: number;
  readonly max: number;
  /** Told of each template pushed out to stay within the bound (its metric). */
  onEvict: (() => void) | undefined;
}

/** A statement's text and how its rows are read, with where each of its parameters is among a read's bound values. */
interface Template {
  sql: string;
  sources: number[];
  decode: Statement['decode'];
  total: Statement['total'];
}

/** A read of this structure goes through Prisma. */
const PRISMA = 'prisma';
/** A read of this structure binds a value its structure holds (a text compared whole, say): built every time. */
const UNBOUND = 'unbound';

/** Distinct structures of reads kept. */
const STATEMENT_TEMPLATES_MAX_ENTRIES = 1_000;

export function createStatementTemplates(max = STATEMENT_TEMPLATES_MAX_ENTRIES): StatementTemplates {
  const kept = new LRUCache<string, Template | typeof PRISMA | typeof UNBOUND>({
    max,
    dispose: (_template, _key, reason) => {
      if (reason === 'evict') templates.onEvict?.();
    },
  });
  const templates: StatementTemplates = {
    statementOf(kind, args, build) {
      const values: unknown[] = [];
      const key = `${kind} ${structureOf(args, values, false, '')}`;
      const found = kept.get(key);
      if (found === PRISMA) return undefined;
      if (found !== undefined && found !== UNBOUND) {
        return { sql: found.sql, params: found.sources.map((index) => values[index]), decode: found.decode, total: found.total };
      }
      const statement = build();
      if (found === undefined) {
        const template = statement ? templateOf(statement, values) : PRISMA;
        if (template !== undefined) kept.set(key, template);
      }
      return statement;
    },
    get size() {
      return kept.size;
    },
    max,
    onEvict: undefined,
  };
  return templates;
}

/**
 * What a read is with the values a statement may bind left out: each number, bigint and boolean of
 * its `where` and `cursor`, each `in` list, each `contains` text, collected in `values` in the order
 * met. Everything else, the names and order of its keys included, is in the text it returns, so two
 * reads of one text differ only in those values.
 */
function structureOf(value: unknown, values: unknown[], bound: boolean, key: string): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    if (bound && key === 'in') {
      values.push(value);
      return value.every((item) => item !== null && typeof item !== 'object') ? '?in' : '?in!';
    }
    let text = '[';
    for (const item of value) text += `${structureOf(item, values, bound, key)},`;
    return `${text}]`;
  }
  switch (typeof value) {
    case 'object': {
      if (value instanceof Date) return 'Date';
      let text = '{';
      for (const name in value) {
        text += `${name}:${structureOf((value as Row)[name], values, bound || name === 'where' || name === 'cursor', name)},`;
      }
      return `${text}}`;
    }
    case 'string':
      if (bound && key === 'contains') {
        values.push(value);
        return '?string';
      }
      return JSON.stringify(value);
    case 'number':
    case 'bigint':
    case 'boolean':
      if (!bound) return String(value);
      values.push(value);
      return `?${typeof value}`;
    default:
      return typeof value;
  }
}

/**
 * The template of a statement just built, each of its parameters found among the read's bound
 * values: undefined when one could be either of two of them (equal values; a later read tells them
 * apart), UNBOUND when one is none of them (the statement binds what the structure holds).
 */
function templateOf(statement: Statement, values: readonly unknown[]): Template | typeof UNBOUND | undefined {
  const sources: number[] = [];
  for (const param of statement.params) {
    const index = values.findIndex((value) => Object.is(value, param));
    if (index === -1) return UNBOUND;
    if (values.some((value, other) => other !== index && Object.is(value, param))) return undefined;
    sources.push(index);
  }
  return { sql: statement.sql, sources, decode: statement.decode, total: statement.total };
}
