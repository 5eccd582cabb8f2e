import { createHash } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../support/browser.js';
import { useTestGateway } from '../support/gateway.js';

/**
 * GraphiQL at GET /graphql, in Debian's headless Chromium, on a machine with
 * no internet: the page must come whole from the gateway (the
 * @graphql-yoga/render-graphiql bundle), never from a CDN.
 */

const haveChromium = chromiumAvailable('the GraphiQL browser test');

const gateway = useTestGateway();
let browser: Browser | undefined;
let categoryId: string;

beforeAll(async () => {
  if (!haveChromium) return;
  const category = await gateway.prisma.category.create({
    data: { name: 'Seen in GraphiQL', description: 'Written by the test.' },
  });
  categoryId = String(category.id);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

interface RecordingPage {
  page: Page;
  requested: string[];
  refused: string[];
  /** Console errors and warnings, of the page and its workers. */
  console: string[];
  /** What the content security policy blocked: `<directive> <blocked URI>`. */
  violations(): Promise<string[]>;
  /** The URLs of the workers the page started. */
  workers: string[];
}

/**
 * A page that records every request it (and its workers) makes, refuses any
 * that leaves 127.0.0.1, and records what its content security policy blocks
 * (unless `bypassCSP`, for checking the recording itself).
 */
async function openRecordingPage({ bypassCSP = false } = {}): Promise<RecordingPage> {
  const context = await (browser as Browser).newContext({ bypassCSP });
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push(`${event.effectiveDirective} ${event.blockedURI}`);
    });
  });
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
  const console: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.push(message.text());
  });
  const workers: string[] = [];
  page.on('worker', (worker) => {
    workers.push(worker.url());
    worker.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') console.push(`worker: ${message.text()}`);
    });
  });
  const violations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  return { page, requested, refused, console, violations, workers };
}

/** No violation of the content security policy, and no console message about one. */
async function expectNoViolations({ console, violations }: RecordingPage) {
  expect(await violations()).toEqual([]);
  expect(console.filter((message) => /Content Security Policy|Refused to/i.test(message))).toEqual([]);
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

  it('is served with a content security policy that names its own inline script and nothing from elsewhere', async () => {
    const response = await fetch(`${gateway.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    const policy = response.headers.get('content-security-policy') ?? '';
    const html = await response.text();
    const directives = new Map(
      policy.split(';').map((directive) => {
        const [name = '', ...values] = directive.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('worker-src')).toEqual(['blob:']);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    // Scripts: only hashes, one per inline script of the page; no 'unsafe-inline', no 'unsafe-eval', no host.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, body]) => body!);
    expect(scripts.length).toBeGreaterThan(0);
    const hashes = scripts.map((body) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
    expect(directives.get('script-src')).toEqual(hashes);
    expect(policy).not.toMatch(/https?:|\*|'unsafe-eval'|'strict-dynamic'/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    // JSON answers carry no page policy.
    const json = await fetch(`${gateway.baseUrl}/graphql?query=${encodeURIComponent('{ __typename }')}`);
    expect(json.headers.get('content-security-policy')).toBeNull();
  });

  it('runs a query given in the address and shows its result', { timeout: 90_000 }, async () => {
    const recording = await openRecordingPage();
    const { page, requested, refused } = recording;
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
    await expectNoViolations(recording);
    await page.context().close();
  });

  it('would notice a resource from outside 127.0.0.1', { timeout: 30_000 }, async () => {
    // The policy would block the script before any request; without it, the route must catch it.
    const { page, refused } = await openRecordingPage({ bypassCSP: true });
    await page.goto(`${gateway.baseUrl}/graphql`);
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.src = 'https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js';
      document.head.append(script);
    });
    await expect.poll(() => refused).toEqual(['https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js']);
    await page.context().close();
  });

  it('blocks, under its policy, an injected inline script and a request to another origin', { timeout: 30_000 }, async () => {
    const recording = await openRecordingPage();
    const { page, refused } = recording;
    await page.goto(`${gateway.baseUrl}/graphql`);
    await page.locator('.graphiql-query-editor').waitFor({ state: 'visible', timeout: 30_000 });
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.injected = true;';
      document.head.append(script);
      const external = document.createElement('script');
      external.src = 'https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js';
      document.head.append(external);
      void fetch('https://api.elsewhere.example/graphql', { method: 'POST' }).catch(() => undefined);
    });
    await expect.poll(() => recording.violations()).toHaveLength(3);
    expect((await recording.violations()).sort()).toEqual([
      'connect-src https://api.elsewhere.example/graphql',
      'script-src-elem https://cdn.jsdelivr.net/npm/graphiql/graphiql.min.js',
      'script-src-elem inline',
    ]);
    expect(await page.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined();
    // Blocked by the policy, so never even requested.
    expect(refused).toEqual([]);
    await page.context().close();
  });

  it('runs a query typed into the editor', { timeout: 90_000 }, async () => {
    const recording = await openRecordingPage();
    const { page, refused } = recording;
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
    await expectNoViolations(recording);
    // The editor's workers (blob: URLs, allowed by worker-src) run, with nothing to complain of.
    expect(recording.workers.length).toBeGreaterThan(0);
    expect(recording.console).toEqual([]);
    await page.context().close();
  });
});
