import { existsSync } from 'node:fs';
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
