import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, migratedDatabase, startProcess } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { chromiumAvailable, launchChromium, serveBuiltApp } from '../support/browser.js';
import { type GatewayProcess, projectRoot, run } from '../support/processes.js';

/**
 * The typed web client in examples/web, as a frontend team builds and ships it: GraphQL Code
 * Generator types its documents and writes its trusted-documents manifest, Vite builds it, a static
 * server serves it, and headless Chromium drives it against a real gateway process that runs only
 * that manifest's documents (TRUSTED_DOCUMENTS=require) and lets the app's origin in (CORS_ORIGINS).
 * The list, a live query (`@live`), renders page by page, an order lowers the stock on screen, and
 * the gateway sends the changed page to a second page; a pet that is sold or has no stock is offered no order. Screenshots
 * go to test/web/screenshots/.
 */

const haveChromium = chromiumAvailable("the example app's browser test");

const example = path.join(projectRoot, 'examples/web');
const screenshots = path.join(projectRoot, 'test/web/screenshots');
let staticServer: Awaited<ReturnType<typeof serveBuiltApp>> | undefined;
let appUrl: string;
let gateway: GatewayProcess | undefined;
let browser: Browser | undefined;
let token: string;

beforeAll(async () => {
  if (!haveChromium) return;
  // Build as the frontend would: typed documents and manifest, then the bundle.
  for (const [command, args] of [
    ['npx', ['graphql-codegen', '--config', 'examples/web/codegen.ts']],
    ['npx', ['tsc', '-p', 'examples/web']],
    ['npx', ['vite', 'build', '--config', 'examples/web/vite.config.ts']],
  ] as const) {
    const built = await run(command, [...args], {}, 120_000);
    expect(built.code, `${command} ${args.join(' ')}:\n${built.stdout}${built.stderr}`).toBe(0);
  }
  staticServer = await serveBuiltApp(path.join(example, 'dist'));
  const origin = staticServer.origin;
  const database = await migratedDatabase();
  const category = await database.prisma.category.create({ data: { name: 'Dogs' } });
  // Dog 3 is sold, Dog 4 was never stocked, Dog 5 has one left; the others have 3 each.
  for (let i = 1; i <= 7; i++) {
    const status = i === 3 ? 'sold' : 'available';
    const pet = await database.prisma.pet.create({ data: { name: `Dog ${i}`, categoryId: category.id, status } });
    if (i === 4) continue;
    await database.prisma.inventoryItem.create({ data: { petId: pet.id, quantity: i === 3 ? 0 : i === 5 ? 1 : 3, status } });
  }
  gateway = await startProcess(database.url, {
    TRUSTED_DOCUMENTS: 'require',
    TRUSTED_DOCUMENTS_MANIFESTS: path.join(example, 'src/gql/persisted-documents.json'),
    CORS_ORIGINS: origin,
  });
  token = await testToken(['orders:write']);
  appUrl = `${origin}/?gateway=${encodeURIComponent(gateway.baseUrl)}&token=${encodeURIComponent(token)}`;
  await mkdir(screenshots, { recursive: true });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await staticServer?.close();
  await cleanUp();
});

async function openApp(): Promise<Page> {
  const page = await (await browser!.newContext()).newPage();
  await page.goto(appUrl);
  await page.locator('tr[data-pet]').first().waitFor({ timeout: 30_000 });
  return page;
}

/** Live queries open on the gateway, as its metrics count them. */
async function openLiveQueries(): Promise<number> {
  const metrics = await fetch(`${gateway!.baseUrl}/metrics`).then((response) => response.text());
  return Number(metrics.match(/^petstore_live_queries (\d+)/m)?.[1]);
}

const rowOf = (page: Page, name: string) => page.locator('tr', { hasText: name });
const stockOf = (page: Page, name: string) => rowOf(page, name).locator('.stock');
const actionOf = (page: Page, name: string) => rowOf(page, name).locator('.action');

describe.skipIf(!haveChromium)('the example web app, in Chromium, against a gateway that runs only its documents', () => {
  it('lists pets page by page with their stock, orders, and updates a second page live', async () => {
    const first = await openApp();
    await expect.poll(() => first.locator('tr[data-pet] td:first-child').allTextContents()).toEqual(
      ['Dog 1', 'Dog 2', 'Dog 3', 'Dog 4', 'Dog 5'],
    );
    expect(await stockOf(first, 'Dog 1').textContent()).toBe('3');
    expect(await first.locator('#status').textContent()).toBe('7 pets; page 1.');
    await first.screenshot({ path: path.join(screenshots, '1-list.png') });

    await first.locator('#next').click();
    await expect.poll(() => first.locator('tr[data-pet] td:first-child').allTextContents()).toEqual(['Dog 6', 'Dog 7']);
    await first.locator('#previous').click();
    await expect.poll(() => first.locator('tr[data-pet] td:first-child').allTextContents()).toHaveLength(5);

    // A second page, its list live too (the first page's live query, opened anew at each page, is the other).
    const second = await openApp();
    await expect.poll(openLiveQueries).toBe(2);

    expect(await stockOf(second, 'Dog 2').textContent()).toBe('3');
    await first.locator('tr', { hasText: 'Dog 2' }).locator('button').click();
    await expect.poll(() => stockOf(first, 'Dog 2').textContent()).toBe('2');
    await expect.poll(() => first.locator('#status').textContent()).toMatch(/^Ordered one Dog 2: order \d+\.$/);
    await first.screenshot({ path: path.join(screenshots, '2-ordered.png') });
    await expect.poll(() => stockOf(second, 'Dog 2').textContent(), { timeout: 10_000 }).toBe('2');
    expect(await stockOf(second, 'Dog 1').textContent()).toBe('3');
    await second.screenshot({ path: path.join(screenshots, '3-second-page-updated.png') });
  });

  it('offers no order for a sold pet or one without stock, and takes the offer away when the last one is ordered', async () => {
    // The pages of the test before stay open, with their live queries.
    const before = await openLiveQueries();
    const first = await openApp();
    const second = await openApp();
    await expect.poll(openLiveQueries).toBe(before + 2);

    for (const page of [first, second]) {
      expect(await rowOf(page, 'Dog 3').locator('.status').textContent()).toBe('SOLD');
      expect(await stockOf(page, 'Dog 4').textContent()).toBe('—');
      for (const name of ['Dog 3', 'Dog 4']) expect(await rowOf(page, name).locator('button').count(), name).toBe(0);
      expect(await actionOf(page, 'Dog 3').textContent()).toBe('Sold');
      expect(await actionOf(page, 'Dog 4').textContent()).toBe('Out of stock');
      expect(await actionOf(page, 'Dog 5').locator('button').textContent()).toBe('Order 1');
    }

    await rowOf(first, 'Dog 5').locator('button').click();
    await expect.poll(() => first.locator('#status').textContent()).toMatch(/^Ordered one Dog 5: order \d+\.$/);
    // The last one is ordered (the pet is PENDING while its order is open): neither page offers it now.
    for (const page of [first, second]) {
      await expect.poll(() => stockOf(page, 'Dog 5').textContent(), { timeout: 10_000 }).toBe('0');
      await expect.poll(() => actionOf(page, 'Dog 5').textContent()).toBe('Out of stock');
      expect(await rowOf(page, 'Dog 5').locator('button').count()).toBe(0);
      expect(await rowOf(page, 'Dog 5').locator('.status').textContent()).toBe('PENDING');
    }
    await second.screenshot({ path: path.join(screenshots, '4-nothing-to-order.png') });
  });
});
