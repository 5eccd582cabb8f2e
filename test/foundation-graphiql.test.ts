import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './support/gateway.js';

/**
 * GraphiQL at GET /graphql, in Debian's headless Chromium, on a machine with
 * no internet: the page must come whole from the gateway (the
 * @graphql-yoga/render-graphiql bundle), never from a CDN.
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// CI installs Chromium (.ci/run); there a missing browser is a failure, not a skip.
if (!haveChromium && process.env.CI) {
  throw new Error(`${CHROMIUM} is missing in CI: .ci/run should have installed Debian's chromium.`);
}
if (!haveChromium) {
  console.warn(
    `SKIPPED the GraphiQL browser test: ${CHROMIUM} is missing. Install it with ` +
      '`apt-get update && apt-get install -y chromium` (.ci/run does, so it runs in CI).',
  );
}

const gateway = useTestGateway();
let browser: Browser | undefined;
let categoryId: string;

beforeAll(async () => {
  if (!haveChromium) return;
  const category = await gateway.prisma.category.create({
    data: { name: 'Seen in GraphiQL', description: 'Written by the test.' },
  });
  categoryId = String(category.id);
  browser = await chromium.launch({
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
});

afterAll(async () => {
  await browser?.close();
});

/** A page that records every request it (and its workers) makes, and refuses any that leaves 127.0.0.1. */
async function openRecordingPage(): Promise<{ page: Page; requested: string[]; refused: string[] }> {
  const context = await (browser as Browser).newContext();
  const requested: string[] = [];
  const refused: string[] = [];
  const local = new URL(gateway.baseUrl).origin;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requested.push(url);
    if (url.startsWith(`${local}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    refused.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (request) => {
    if (!requested.includes(request.url())) requested.push(request.url());
  });
  const page = await context.newPage();
  return { page, requested, refused };
}

/** The text an editor shows; Monaco draws spaces as no-break spaces. */
async function shownIn(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).innerText()).replace(/\u00a0/g, ' ');
}

const query = '{ categories { totalCount edges { node { name description } } } }';

describe.skipIf(!haveChromium)('GraphiQL at GET /graphql', () => {
  it('is served from the package, as HTML, to a browser', async () => {
    const response = await fetch(`${gateway.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('<title>Petstore GraphQL gateway</title>');
    expect(html).toContain('renderYogaGraphiQL');
    // No script or stylesheet from elsewhere: the bundle is inline.
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr\.net|cdnjs|esm\.sh/);
  });

  it('runs a query given in the address and shows its result', { timeout: 90_000 }, async () => {
    const { page, requested, refused } = await openRecordingPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${gateway.baseUrl}/graphql?query=${encodeURIComponent(query)}`);
    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 30_000 });
    await expect.poll(() => shownIn(page, '.graphiql-query-editor'), { timeout: 30_000 }).toContain('categories');
    await run.click();

    await expect
      .poll(() => shownIn(page, '.graphiql-response'), { timeout: 30_000 })
      .toContain('Seen in GraphiQL');
    const shown = await shownIn(page, '.graphiql-response');
    expect(shown).toContain('"totalCount": 1');
    expect(shown).toContain('Written by the test.');

    expect(refused, 'requests that left 127.0.0.1').toEqual([]);
    expect(requested).toContain(`${gateway.baseUrl}/graphql?query=${encodeURIComponent(query)}`);
    expect(requested).toContain(`${gateway.baseUrl}/graphql`);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('would notice a resource from outside 127.0.0.1', { timeout: 30_000 }, async () => {
    const { page, refused } = await openRecordingPage();
    await page.goto(`${gateway.baseUrl}/graphql`);
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.src = 'https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js';
      document.head.append(script);
    });
    await expect.poll(() => refused).toEqual(['https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js']);
    await page.context().close();
  });

  it('runs a query typed into the editor', { timeout: 90_000 }, async () => {
    const { page, refused } = await openRecordingPage();
    await page.goto(`${gateway.baseUrl}/graphql`);
    const editor = page.locator('.graphiql-query-editor');
    await editor.waitFor({ state: 'visible', timeout: 30_000 });

    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    // insertText, not type: the editor closes brackets as they are typed.
    await page.keyboard.insertText(`{ category(id: "${categoryId}") { name } __typename }`);
    await page.locator('.graphiql-execute-button').click();

    await expect
      .poll(() => shownIn(page, '.graphiql-response'), { timeout: 30_000 })
      .toContain('"__typename": "Query"');
    expect(await shownIn(page, '.graphiql-response')).toContain('"name": "Seen in GraphiQL"');
    expect(refused, 'requests that left 127.0.0.1').toEqual([]);
    await page.context().close();
  });
});
