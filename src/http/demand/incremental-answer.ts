/**
 * The data an incremental (`@defer`/`@stream`) answer adds up to, put together from its parts as a
 * client puts them together: the first part's `data`, then each `incremental` entry's `data` merged
 * into the object at its `path`, or its `items` set into the list at its `path` (the index of the
 * first). What its actual cost is counted over, once the last part (`hasNext: false`) is out.
 */
interface IncrementalEntry {
  data?: Record<string, unknown> | null;
  items?: readonly unknown[] | null;
  path?: ReadonlyArray<string | number>;
}

export interface AnswerPart {
  data?: Record<string, unknown> | null;
  incremental?: readonly IncrementalEntry[];
  hasNext?: boolean;
}

type Container = Record<string | number, unknown>;

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

function mergeInto(target: Container, source: Record<string, unknown>) {
  for (const [key, value] of Object.entries(source)) {
    const present = target[key];
    if (isContainer(present) && isContainer(value) && Array.isArray(present) === Array.isArray(value)) {
      mergeInto(present, value as Record<string, unknown>);
    } else {
      target[key] = value;
    }
  }
}

function containerAt(root: unknown, path: ReadonlyArray<string | number>): Container | undefined {
  let at = root;
  for (const step of path) {
    if (!isContainer(at)) return undefined;
    at = at[step];
  }
  return isContainer(at) ? at : undefined;
}

export class IncrementalAnswer {
  #data: Record<string, unknown> | null = null;

  /** Adds a part as it goes out; the parts are the client's, so the first part's data is copied, not changed. */
  add(part: AnswerPart): void {
    if (part.data !== undefined) this.#data = part.data === null ? null : structuredClone(part.data);
    for (const entry of part.incremental ?? []) {
      const path = entry.path ?? [];
      if (entry.items) {
        const list = containerAt(this.#data, path.slice(0, -1));
        const first = Number(path.at(-1));
        if (Array.isArray(list) && Number.isInteger(first)) entry.items.forEach((item, index) => (list[first + index] = structuredClone(item)));
      } else if (entry.data) {
        const target = containerAt(this.#data, path);
        if (target) mergeInto(target, structuredClone(entry.data));
      }
    }
  }

  /** The answer's data so far: all of it once the last part was added. */
  get data(): Record<string, unknown> | null {
    return this.#data;
  }
}
