import DataLoader from 'dataloader';
import { forNoRequestInParticular } from '../database/cancellation.js';

/**
 * Runs a single-row read together with the others that arrive in the same
 * turn of the event loop, from any request. Prisma answers the findUnique
 * calls made in one tick with one statement (`WHERE id IN (…)`) when their
 * selections match, but each request runs in a tick of its own; gathering the
 * reads with a DataLoader that waits for the end of the turn (setImmediate)
 * makes concurrent `pet(id:)`, `category(id:)` and `GET /pets/{petId}` one
 * statement. Each read keeps its own selection and gets its own row, so no
 * caller sees another's answer; nothing is cached (every read goes to the
 * database). Only for reads outside transactions.
 */
export type Lookups = <T>(read: () => Promise<T>) => Promise<T>;

export function createLookups(): Lookups {
  const loader = new DataLoader<() => Promise<unknown>, unknown>(
    // All reads of the batch are started in one tick; each settles on its own. The statement serves
    // several requests, so one of them reaching its time limit does not cancel it.
    (reads) => forNoRequestInParticular(() => Promise.all(reads.map((read) => settle(read)))),
    { cache: false, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
  );
  return <T>(read: () => Promise<T>) => loader.load(read) as Promise<T>;
}

/** One read's result, or its error (thrown at once or later): one read's failure is never its batch's. */
async function settle(read: () => Promise<unknown>): Promise<unknown> {
  try {
    return await read();
  } catch (error) {
    return toError(error);
  }
}

/** DataLoader rejects a key whose result is an Error; anything else thrown is wrapped so it still rejects. */
function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
