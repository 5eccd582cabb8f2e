import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp, migratedDatabase } from '../support/operations.js';
import { testToken } from '../support/tokens.js';
import { chromiumAvailable, launchChromium, serveBuiltApp } from '../support/browser.js';
import { type GatewayProcess, projectRoot, run } from '../support/processes.js';
import { startProcess } from '../support/operations.js';

/**
 * The Relay example in examples/relay, as a Relay team builds it: relay-compiler compiles every
 * fragment (each type @refetchable, three @connection lists) against the gateway's schema.graphql,
 * Vite builds it, and headless Chromium drives it against a real gateway process: the pets page by
 * page, a category's pets page by page (asked of node(id:) by the category's global id), a pet's
 * orders page by page, and a pet and a stock entry refetched by their global ids after they changed
 * behind the page's back. Screenshots go to test/web/screenshots/.
 */

const haveChromium = chromiumAvailable("the Relay example's browser test");

const example = path.join(projectRoot, 'examples/relay');
const screenshots = path.join(projectRoot, 'test/web/screenshots');
let staticServer: Awaited<ReturnType<typeof serveBuiltApp>> | undefined;
let appUrl: string;
let gateway: GatewayProcess | undefined;
let browser: Browser | undefined;
let prisma: Awaited<ReturnType<typeof migratedDatabase>>['prisma'];
const petIds: bigint[] = [];

/** relay-compiler, as the example's own folder runs it (its config names paths from there). */
const compileRelay = (...args: string[]) => run('npx', ['relay-compiler', ...args], {}, 120_000, example);

describe('the Relay example, compiled', () => {
  it('compiles refetchable fragments of every Node type and paginated connections against schema.graphql', async () => {
    const compiled = await compileRelay();
    expect(compiled.code, `${compiled.stdout}${compiled.stderr}`).toBe(0);
    // A refetch query per type, each asked of node(id:) by the global id relay-compiler expects (nodeId).
    for (const [query, type] of [
      ['PetCardRefetchQuery', 'Pet'],
      ['CategoryBadgeRefetchQuery', 'Category'],
      ['OrderLineRefetchQuery', 'Order'],
      ['StockLineRefetchQuery', 'InventoryItem'],
    ]) {
      const artifact = await readFile(path.join(example, 'src/components/__generated__', `${query}.graphql.ts`), 'utf8');
      expect(artifact, query).toMatch(/node\(id: \$nodeId\)/);
      expect(artifact, query).toMatch(new RegExp(`fragment \\w+ on ${type} `));
      expect(artifact, query).toMatch(/nodeId/);
    }
    // The artifacts on disk are the ones the sources make.
    expect((await compileRelay('--validate')).code).toBe(0);
  }, 180_000);
});

beforeAll(async () => {
  if (!haveChromium) return;
  await rm(path.join(example, 'dist'), { recursive: true, force: true });
  for (const [command, args, cwd] of [
    ['npx', ['relay-compiler'], example],
    ['npx', ['tsc', '-p', 'examples/relay'], projectRoot],
    ['npx', ['vite', 'build', '--config', 'examples/relay/vite.config.ts'], projectRoot],
  ] as const) {
    const built = await run(command, [...args], {}, 180_000, cwd);
    expect(built.code, `${command} ${args.join(' ')}:\n${built.stdout}${built.stderr}`).toBe(0);
  }
  staticServer = await serveBuiltApp(path.join(example, 'dist'));
  const origin = staticServer.origin;
  const database = await migratedDatabase();
  prisma = database.prisma;
  const dogs = await prisma.category.create({ data: { name: 'Dogs' } });
  const cats = await prisma.category.create({ data: { name: 'Cats' } });
  for (let i = 1; i <= 7; i++) {
    const pet = await prisma.pet.create({ data: { name: `${i % 2 ? 'Dog' : 'Cat'} ${i}`, categoryId: i % 2 ? dogs.id : cats.id } });
    petIds.push(pet.id);
  }
  await prisma.inventoryItem.create({ data: { petId: petIds[0]!, quantity: 3, status: 'available' } });
  for (let n = 1; n <= 3; n++) await prisma.order.create({ data: { petId: petIds[0]!, quantity: n, complete: n === 1 } });
  gateway = await startProcess(database.url, { CORS_ORIGINS: origin });
  const token = await testToken(['orders:read']);
  appUrl = `${origin}/?gateway=${encodeURIComponent(gateway.baseUrl)}&token=${encodeURIComponent(token)}&category=${dogs.id}`;
  await mkdir(screenshots, { recursive: true });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await staticServer?.close();
  await cleanUp();
});

async function openApp(): Promise<Page> {
  const page = await (await browser!.newContext()).newPage();
  await page.goto(appUrl);
  await page.locator('li.pet').first().waitFor({ timeout: 30_000 });
  return page;
}

const names = (page: Page, list: string) => page.locator(`${list} > li`).evaluateAll((items) => items.map((item) => item.querySelector('.name')?.textContent ?? item.textContent));

describe.skipIf(!haveChromium)('the Relay example, in Chromium, against a gateway', () => {
  it('pages the pets, a category\'s pets and a pet\'s orders with their cursors', async () => {
    const page = await openApp();
    await expect.poll(() => names(page, '#pets')).toEqual(['Dog 1', 'Cat 2', 'Dog 3']);
    await page.locator('#more-pets').click();
    await expect.poll(() => names(page, '#pets')).toEqual(['Dog 1', 'Cat 2', 'Dog 3', 'Cat 4', 'Dog 5', 'Cat 6']);
    await page.locator('#more-pets').click();
    await expect.poll(() => names(page, '#pets')).toHaveLength(7);
    await expect.poll(() => page.locator('#more-pets').count()).toBe(0);

    // The category's next page comes from node(id:), by the category's global id.
    expect(await page.locator('#category-name').textContent()).toBe('Dogs');
    await expect.poll(() => page.locator('#category-pets > li').allTextContents()).toEqual(['Dog 1', 'Dog 3']);
    await page.locator('#more-category-pets').click();
    await expect.poll(() => page.locator('#category-pets > li').allTextContents()).toEqual(['Dog 1', 'Dog 3', 'Dog 5', 'Dog 7']);

    // Dog 1's orders, two at a time.
    const dog = page.locator(`li.pet[data-pet="${petIds[0]}"]`);
    await expect.poll(() => dog.locator('li.order').count()).toBe(2);
    await dog.locator('.more-orders').click();
    await expect.poll(() => dog.locator('li.order').allTextContents()).toEqual([
      expect.stringMatching(/^Order \d+: 1 \(complete\)$/),
      expect.stringMatching(/^Order \d+: 2 \(open\)$/),
      expect.stringMatching(/^Order \d+: 3 \(open\)$/),
    ]);
    await page.screenshot({ path: path.join(screenshots, 'relay-1-paged.png') });
  });

  it('refetches a pet and a stock entry by their global ids, and shows what changed', async () => {
    const page = await openApp();
    const dog = page.locator(`li.pet[data-pet="${petIds[0]}"]`);
    await expect.poll(() => dog.locator('.stock').textContent()).toBe('3');
    // Changed behind the page's back; Relay's store still holds the old values until refetched.
    await prisma.pet.update({ where: { id: petIds[0]! }, data: { name: 'Rex' } });
    await prisma.inventoryItem.update({ where: { petId: petIds[0]! }, data: { quantity: 9 } });
    expect(await dog.locator('.name').textContent()).toBe('Dog 1');

    await dog.locator('.refresh-stock').click();
    await expect.poll(() => dog.locator('.stock').textContent()).toBe('9');
    expect(await dog.locator('.name').textContent()).toBe('Dog 1');

    await dog.locator('.refresh-pet').click();
    await expect.poll(() => dog.locator('.name').textContent()).toBe('Rex');
    // The category list shows the same object from the store: renamed there too.
    await expect.poll(() => page.locator('#category-pets > li').first().textContent()).toBe('Rex');
    await page.screenshot({ path: path.join(screenshots, 'relay-2-refetched.png') });
  });
});
