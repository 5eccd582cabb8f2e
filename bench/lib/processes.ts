import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { checkNotInterrupted, undoLater } from './cleanup.js';
import { log as say } from './config.js';

export { freePort } from '../../harness/ports.js';

export interface ServerProcess {
  name: string;
  url: string;
  child: ChildProcess;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Base URL; ready when POST {url}/graphql answers { __typename } with 200. */
  url: string;
  logFile: string;
  timeoutMs?: number;
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  checkNotInterrupted();
  const log = createWriteStream(options.logFile, { flags: 'w' });
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `exited (code ${code}, signal ${signal})`;
      resolve();
    });
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);

  const stop = undoLater(`stop ${options.name} (pid ${child.pid})`, async () => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    }
    log.end();
  });
  // The pid and port, for whoever checks that they are gone after the run (test/operations/bench-cleanup.test.ts).
  say(`started ${options.name} (pid ${child.pid}) at ${options.url}`);
  const server: ServerProcess = {
    name: options.name,
    url: options.url,
    child,
    pid: child.pid,
    logFile: options.logFile,
    stop,
  };

  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  for (;;) {
    if (exited !== undefined) {
      await server.stop();
      throw new Error(`${options.name} ${exited} before it was ready; see ${options.logFile}:\n${tail(options.logFile)}`);
    }
    try {
      const response = await fetch(`${options.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
        signal: AbortSignal.timeout(2000),
      });
      await response.arrayBuffer();
      if (response.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${options.name} was not ready after ${options.timeoutMs ?? 90_000} ms; see ${options.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Runs a command to its end, in a process group of its own that the clean-up ends (npm and tsc
 * beneath it too), without blocking the event loop: a signal is handled while it runs. Sent SIGTERM,
 * npm finishes the step it is in first (tens of seconds in an install); `killAfterMs` lets the
 * clean-up SIGKILL the group after that long, for a command whose folder is removed anyway.
 */
export function runCommand(
  label: string,
  command: string,
  args: string[],
  options: Omit<SpawnOptions, 'detached'> = {},
  killAfterMs?: number,
): Promise<{ status: number | null; output: string }> {
  checkNotInterrupted();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options, detached: true });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const ended = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const forget = undoLater(`end ${label}`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    signalGroup('SIGTERM');
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => signalGroup('SIGKILL'), killAfterMs);
    await ended.catch(() => undefined);
    clearTimeout(timer);
  });
  return ended.then(
    async (status) => {
      await forget();
      return { status, output };
    },
    async (error: unknown) => {
      await forget();
      throw error;
    },
  );
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

// ---- /proc readings (Linux) ----------------------------------------------

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) of a process and all its threads, in ms; undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** VmHWM (peak resident set) and VmRSS of a process, in MB. */
export function memoryMb(pid: number): { peakRss: number; rss: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { peakRss: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return undefined;
  }
}

/** Whole-machine CPU counters from /proc/stat: busy and total jiffies. */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * CPU of the PostgreSQL backends serving one database, found by their process
 * title ("postgres: …: <user> <database> <client> <state>"). A backend that
 * exits keeps the last reading taken, so call sample() often (every second).
 */
export class BackendCpu {
  private readonly baseline = new Map<number, number>();
  private readonly last = new Map<number, number>();
  available = true;

  constructor(private readonly database: string) {}

  private scan(): Map<number, number> {
    const found = new Map<number, number>();
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      this.available = false;
      return found;
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      let title: string;
      try {
        title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (!title.startsWith('postgres:') || !title.includes(` ${this.database} `)) continue;
      const ms = cpuMs(pid);
      if (ms !== undefined) found.set(pid, ms);
    }
    return found;
  }

  /** Takes a reading; backends that exit later keep their last one. */
  sample(): void {
    for (const [pid, ms] of this.scan()) this.last.set(pid, ms);
  }

  /** Starts a measurement: backends present now count from their current CPU time. */
  start(): void {
    this.baseline.clear();
    this.last.clear();
    for (const [pid, ms] of this.scan()) {
      this.baseline.set(pid, ms);
      this.last.set(pid, ms);
    }
  }

  /** CPU ms the backends used since start(); backends that appeared later count from zero. */
  elapsed(): number {
    this.sample();
    let total = 0;
    for (const [pid, ms] of this.last) total += ms - (this.baseline.get(pid) ?? 0);
    return total;
  }
}
