import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandEnv, type GatewayProcess, projectRoot, startGateway, stopAll } from '../support/processes.js';

/**
 * The README's commands, run as written against a gateway started as
 * `npm start` starts it (a fresh data folder, the embedded database, the demo
 * data): its shell blocks, one after another in one shell, with the address
 * it documents pointed at this gateway. A block marked `sh no-test` (installing,
 * the test suite itself, the example app's dev server) is not run, and only
 * those known ones may be so marked: a new command in the README is run here.
 */

const README = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
const DOCUMENTED = 'http://127.0.0.1:4000';

interface Block {
  info: string;
  code: string;
}

const blocks: Block[] = [...README.matchAll(/^```(sh[^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => ({ info: match[1]!.trim(), code: match[2]! }));
const runnable = blocks.filter((block) => block.info === 'sh');
const notRun = blocks.filter((block) => block.info !== 'sh');

let gateway: GatewayProcess;
let dataDir: string;
let outputs: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'petstore-readme-'));
  gateway = await startGateway({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' });
  // One shell for all blocks, as a reader pastes them into one terminal (TOKEN carries over); the
  // subscription, which a reader leaves running in a terminal of its own, runs in the background.
  const script = runnable
    .map((block, index) => {
      const code = block.code.replaceAll(DOCUMENTED, gateway.baseUrl);
      const marker = `echo; echo "=== block ${index} ==="`;
      if (code.includes('text/event-stream')) {
        return `${marker}\n( ${code.trim()} ) > "$SUBSCRIPTION_OUT" 2>&1 &\nSUBSCRIPTION=$!\nsleep 2`;
      }
      return `${marker}\n${code}`;
    })
    .join('\n');
  const out = path.join(dataDir, 'subscription.out');
  const full = `set -e\nSUBSCRIPTION_OUT='${out}'\n${script}\nsleep 2\nkill $SUBSCRIPTION 2>/dev/null || true\necho; echo "=== subscription ==="\ncat "$SUBSCRIPTION_OUT"\n`;
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-c', full], { cwd: projectRoot, env: commandEnv({ DATA_DIR: dataDir }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  outputs = result.stdout.split(/^=== .* ===$/m).slice(1).map((part) => part.trim());
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  stopAll();
  await rm(dataDir, { recursive: true, force: true });
});

/** The JSON bodies a block printed, one after another (curl ends none with a newline). */
function jsonOf(output: string): Array<Record<string, unknown>> {
  const values: Array<Record<string, unknown>> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < output.length; i++) {
    const char = output[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) inString = true;
    else if (char === '{' || char === '[') {
      if (depth++ === 0) start = i;
    } else if ((char === '}' || char === ']') && depth > 0 && --depth === 0) {
      values.push(JSON.parse(output.slice(start, i + 1)) as Record<string, unknown>);
    }
  }
  return values;
}

describe('the README, run as written', () => {
  it('marks as not run only installing, the test suite and the example app', () => {
    expect(notRun.map((block) => block.code.trim().split('\n')[0]!.split('#')[0]!.trim())).toEqual([
      'npm install && npm start',
      'npm run example:web',
    ]);
    expect(runnable.length).toBeGreaterThanOrEqual(5);
  });

  it('says at start which key checks tokens and how to mint one', () => {
    expect(gateway.output()).toContain(`development key made for this data folder (${path.join(dataDir, 'dev-jwt-secret')})`);
    expect(gateway.output()).toContain('npm run token -- --scope');
  });

  it('answers the query, the legacy route, the order with a token, the orders, the subscription and the write', () => {
    const [query, legacy, order, subscribe, write, subscription] = outputs;
    const pets = jsonOf(query!)[0] as { data: { pets: { totalCount: number; nodes: unknown[] } }; errors?: unknown };
    expect(pets.errors).toBeUndefined();
    expect(pets.data.pets.totalCount).toBe(20);
    expect(pets.data.pets.nodes).toHaveLength(3);

    expect(legacy).toMatch(/^HTTP\/1\.1 200/m);
    expect(legacy).toMatch(/^deprecation: /im);
    expect(legacy).toMatch(/^sunset: /im);
    expect(legacy).toContain('"name":"Rex"');

    const [placed, listed] = jsonOf(order!) as [{ data?: { placeOrder: { quantity: number } }; errors?: unknown }, { length?: number }];
    expect(placed.errors).toBeUndefined();
    expect(placed.data?.placeOrder.quantity).toBe(1);
    expect(Array.isArray(listed)).toBe(true);

    expect(subscribe).toBe('');
    expect(jsonOf(write!)[0]).toEqual({
      data: { updateInventory: { quantity: 7, status: 'AVAILABLE' } },
      extensions: { cost: { estimated: expect.any(Number), actual: expect.any(Number), budgetLeft: expect.any(Number) } },
    });
    expect(subscription).toContain('event: next');
    expect(subscription).toContain('"inventoryChanged":{"petId":"1","quantity":7,"status":"AVAILABLE"}');
  });
});
