/**
 * What a bench or soak run makes outside itself (servers, databases, PostgreSQL clusters, folders) is
 * undone here, whether the run ends, fails or is interrupted (SIGINT, SIGTERM, SIGHUP). Each thing
 * registers its undo before it is made, so an interruption in the middle of making it still undoes
 * it; undos run newest first (servers stop before their database is dropped). Once the clean-up has
 * begun, nothing new may start: `undoLater` then undoes at once and throws `Interrupted`, since the
 * run's own code goes on after a signal until it next waits on something that fails.
 */

export class Interrupted extends Error {
  constructor() {
    super('interrupted: cleaning up');
    this.name = 'Interrupted';
  }
}

interface Task {
  label: string;
  run(): Promise<void>;
}

const tasks = new Set<Task>();
const late: Promise<void>[] = [];
let closing: Promise<void> | undefined;

/** True once the clean-up has begun (a signal, or the end of the run). */
export const cleaningUp = () => closing !== undefined;

/** Throws `Interrupted` once the clean-up has begun: call it before starting anything. */
export function checkNotInterrupted(): void {
  if (closing) throw new Interrupted();
}

/**
 * Registers `undo` (run once, at the end of the run or at an interruption) and returns a function
 * that runs it now and forgets it, for the normal path. Errors are reported, not thrown: one failed
 * undo must not keep the others from running.
 */
export function undoLater(label: string, undo: () => Promise<void> | void): () => Promise<void> {
  let done: Promise<void> | undefined;
  const task: Task = {
    label,
    run: () =>
      (done ??= (async () => {
        try {
          await undo();
        } catch (error) {
          console.error(`clean-up: ${label}:`, error instanceof Error ? error.message : error);
        } finally {
          tasks.delete(task);
        }
      })()),
  };
  tasks.add(task);
  if (closing) {
    late.push(task.run());
    throw new Interrupted();
  }
  return task.run;
}

/** Runs every registered undo, newest first; the same promise for every caller. */
export function cleanUp(): Promise<void> {
  closing ??= (async () => {
    for (const task of [...tasks].reverse()) await task.run();
    // Undos registered while the others ran (a server that came up meanwhile).
    while (late.length > 0) await late.shift();
  })();
  return closing;
}

const signalNumbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

/**
 * On SIGINT, SIGTERM or SIGHUP: clean up, then exit with 128 + the signal's number, as a shell
 * reports a process ended by it. A terminal's Ctrl-C reaches every process of the group, and npm
 * relays SIGTERM to its child: later signals wait for the same clean-up.
 */
export function cleanUpOnSignals(say: (message: string) => void): void {
  for (const [signal, number] of Object.entries(signalNumbers)) {
    process.on(signal, () => {
      say(closing ? `${signal}: still cleaning up` : `${signal}: stopping what this run started and removing what it made…`);
      void cleanUp().finally(() => process.exit(128 + number));
    });
  }
}
