import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core (which downloads no browser of its
 * own). CI installs it (.ci/run): there a missing browser is a failure; elsewhere the test is skipped
 * with a line saying how to install it.
 */
export const CHROMIUM = '/usr/bin/chromium';

export function chromiumAvailable(test: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found && process.env.CI) throw new Error(`${CHROMIUM} is missing in CI: .ci/run should have installed Debian's chromium.`);
  if (!found) console.warn(`SKIPPED ${test}: ${CHROMIUM} is missing. Install it with \`apt-get update && apt-get install -y chromium\`.`);
  return found;
}

/** Headless, and quiet on a machine with no network but loopback (no background fetches, no QUIC). */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A built app's folder (index.html and its bundle) served on a free port, as any static host would. */
export async function serveBuiltApp(dist: string): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(async (request, response) => {
    const file = path.join(dist, new URL(request.url ?? '/', 'http://x').pathname.replace(/^\/$/, '/index.html'));
    try {
      const body = await readFile(file);
      const type = file.endsWith('.js') ? 'text/javascript' : file.endsWith('.html') ? 'text/html' : 'application/octet-stream';
      response.writeHead(200, { 'content-type': type }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
