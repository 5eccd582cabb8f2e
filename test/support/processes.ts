import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { settingNames } from '../../src/config.js';

/**
 * Runs the project's commands as separate processes, as a developer or CI
 * would: `npm run db:migrate`, `npm start`'s `tsx src/main.ts`, and so on.
 * Every process gets its own process group, so `stopAll` also ends what
 * npm and tsx start beneath it.
 */

export const projectRoot = path.resolve(import.meta.dirname, '../..');

/** The test runner's environment without the gateway's settings, plus `settings`. */
export function commandEnv(settings: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The settings src/config.ts reads are never inherited from the test runner, only given.
  for (const name of settingNames) delete env[name];
  for (const [name, value] of Object.entries(settings)) {
    if (value !== undefined) env[name] = value;
  }
  return env;
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

function start(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = projectRoot): ChildProcess {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Ends (SIGKILL) every process these helpers started that is still running: for afterAll. */
export function stopAll(): void {
  for (const child of running) killGroup(child, 'SIGKILL');
}

/** Runs a command to its end (in the project, or in `cwd`) and returns its exit code and output. */
export function run(
  command: string,
  args: string[],
  settings: Record<string, string | undefined>,
  timeoutMs = 60_000,
  cwd?: string,
): Promise<Finished> {
  const child = start(command, args, commandEnv(settings), cwd);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} ran longer than ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `npm run <script> -- <args>` in the project. */
export function npmRun(
  script: string,
  args: string[],
  settings: Record<string, string | undefined>,
  timeoutMs?: number,
) {
  return run('npm', ['run', script, ...(args.length ? ['--', ...args] : [])], settings, timeoutMs);
}

export { freePort } from '../../harness/ports.js';

export interface GatewayProcess {
  /** The address it printed: http://host:port/graphql */
  url: string;
  /** http://host:port */
  baseUrl: string;
  /** Milliseconds from spawning the process to its ready line. */
  startupMs: number;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** Sends `signal` to the process (as a process manager would) and waits for its exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const READY = /Petstore GraphQL gateway ready at (http:\/\/\S+\/graphql)/;

/**
 * Starts the gateway as `npm start` does (`tsx src/main.ts`) and resolves
 * once it prints its ready line; rejects with its output if it exits first.
 */
export function startGateway(
  settings: Record<string, string | undefined>,
  timeoutMs = 60_000,
  args: string[] = [],
): Promise<GatewayProcess> {
  const startedAt = performance.now();
  // tsx as a loader in the gateway's own process (as npm start runs it): signals reach it directly.
  const child = start(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], commandEnv(settings));
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`the gateway printed no ready line in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: string) => {
      output += chunk;
      const ready = output.match(READY);
      if (!ready?.[1]) return;
      const url = ready[1];
      clearTimeout(timer);
      resolve({
        url,
        baseUrl: url.replace(/\/graphql$/, ''),
        startupMs: Math.round(performance.now() - startedAt),
        output: () => output,
        async stop(signal = 'SIGTERM', stopTimeoutMs = 15_000) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, fail) => {
            timer = setTimeout(() => {
              killGroup(child, 'SIGKILL');
              fail(new Error(`the gateway did not exit within ${stopTimeoutMs} ms of ${signal}:\n${output}`));
            }, stopTimeoutMs);
          });
          try {
            return await Promise.race([exited, timeout]);
          } finally {
            clearTimeout(timer);
          }
        },
      });
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (code ${code}, signal ${signal}) before it was ready:\n${output}`));
    });
  });
}
