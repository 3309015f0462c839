/**
 * A companion with `server.auth.required: true`, in real Chromium: the app says it needs a key,
 * a wrong key is refused with the companion's message and not kept, the right key is kept (only
 * its prefix shown), sent as a Bearer header on API requests and never to /admin/*, and the
 * text typed in the composer before all this is what gets sent and answered.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHearth } from '../helpers/hearth-cli.js';
import { keyRequiredDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { replyEnds, setSetting } from './app-helpers.js';
import { DESKTOP, launch, screenshot, watch } from './harness.js';

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let key: string;
/** Every request the page made to the companion, with its Authorization header. */
const requests: { path: string; authorization: string | undefined; url: string }[] = [];

const DRAFT = 'Typed before the key was given: say hello.';
const WRONG = `hth_${'W'.repeat(43)}`;

beforeAll(async () => {
  const dataDir = await keyRequiredDataDir({ withModel: true });
  const created = await runHearth(['keys', 'create', '--label', 'browser-test', '--scope', 'inference', '--data-dir', dataDir]);
  expect(created.code, created.stderr).toBe(0);
  key = created.stdout.trim();
  expect(key).toMatch(/^hth_[A-Za-z0-9_-]{40,}$/);

  // Independent starts, overlapped.
  [server, browser] = await Promise.all([startServer({ dataDir }), launch()]);
  context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light' });
  context.on('request', async (request) => {
    const url = new URL(request.url());
    if (url.origin !== server.url) return;
    const entry = { path: url.pathname, url: request.url(), authorization: undefined as string | undefined };
    requests.push(entry);
    // A request still starting when the browser closes has no headers to read any more.
    entry.authorization = (await request.allHeaders().catch((): Record<string, string> => ({}))).authorization;
  });
  page = await context.newPage();
  errors = watch(page);
  await page.goto(server.url);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const status = () => page.getAttribute('.status', 'data-status');
/** The password field labelled "Access key" (its section carries the same name). */
const keyField = () => page.locator('input').and(page.getByLabel('Access key', { exact: true }));

describe('a companion that requires an access key', () => {
  it('is shown as needing a key, while the composer keeps what is typed', async () => {
    await expect.poll(status).toBe('auth');
    expect(await page.locator('.status').getAttribute('href')).toBe('/server#access-key');
    await page.getByRole('status').filter({ hasText: 'The companion asks for an access key' }).waitFor();
    const box = page.getByLabel('Message', { exact: true });
    await box.fill(DRAFT);
    // No model can answer yet: Enter sends nothing and the text stays.
    await box.press('Enter');
    expect(await box.inputValue()).toBe(DRAFT);
    expect(await page.locator('article').count()).toBe(0);
  });

  it("leads from the status indicator to the key form, which refuses a wrong key with the companion's message", async () => {
    await page.locator('.status').click();
    await page.waitForURL(`${server.url}/server#access-key`);
    const input = keyField();
    await input.waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('access-key-input');
    expect(await input.getAttribute('type')).toBe('password');
    expect(await page.getByTestId('server-status').innerText()).toMatch(/^needs an access key — No key is saved in this browser\.$/);

    await input.fill(WRONG);
    await page.getByRole('button', { name: 'Save key' }).click();
    const alert = page.locator('#access-key-error');
    await alert.waitFor();
    // The companion's words, without Markdown backticks, with the command as it runs on that machine.
    expect(await alert.innerText()).toBe('The access key is not a valid key. Check the key, or create a new one with npm run hearth -- keys create.');
    expect(await page.evaluate(() => localStorage.getItem('hearth.access-key'))).toBeNull();
    expect(await status()).toBe('auth');
    await screenshot(page, 'auth-needed');
  });

  it('keeps the right key, shows only its prefix and turns connected', async () => {
    const input = keyField();
    await input.fill(key);
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByTestId('key-prefix').waitFor();
    expect(await page.getByTestId('key-prefix').innerText()).toBe(`${key.slice(0, 10)}…`);
    await expect.poll(status).toBe('connected');
    expect(await page.locator('#access-key-error').count()).toBe(0);
    expect(await keyField().count()).toBe(0);
    await page.getByRole('button', { name: 'Forget key' }).waitFor();
    // The key is in this browser's storage and nowhere on the page.
    expect(await page.evaluate(() => localStorage.getItem('hearth.access-key'))).toBe(key);
    expect(await page.content()).not.toContain(key.slice(10));
    await screenshot(page, 'auth-saved');
  });

  it('streams a reply to the text typed before the key was given', async () => {
    await page.getByRole('link', { name: 'Back to the chat' }).click();
    await page.waitForURL(`${server.url}/`);
    const box = page.getByLabel('Message', { exact: true });
    expect(await box.inputValue()).toBe(DRAFT);
    // The companion's models are offered now that the API lets this browser in.
    await expect.poll(() => page.locator('#model-picker').getAttribute('data-value')).toBe('companion:tiny');
    await setSetting(page, 'Max tokens', '24');
    await box.press('Enter');
    const text = await replyEnds(page);
    expect(text.length).toBeGreaterThan(0);
    expect(await page.locator('article[data-role="user"] .plain').innerText()).toBe(DRAFT);
    expect(await box.inputValue()).toBe('');
  });

  it('sent the key only as a header on API requests: never to admin routes or in a URL', () => {
    const withKey = requests.filter((request) => request.authorization === `Bearer ${key}`).map((request) => request.path);
    expect(withKey).toEqual(expect.arrayContaining(['/v1/models', '/v1/chat/completions']));
    expect(withKey.every((path) => path.startsWith('/v1/'))).toBe(true);
    const admin = requests.filter((request) => request.path.startsWith('/admin/'));
    expect(admin.length).toBeGreaterThan(0);
    expect(admin.every((request) => request.authorization === undefined)).toBe(true);
    expect(requests.filter((request) => request.path === '/health').every((request) => request.authorization === undefined)).toBe(true);
    expect(requests.some((request) => request.url.includes(key.slice(4)) || request.url.includes(WRONG.slice(4)))).toBe(false);
  });

  it('reports no page errors beyond the refused requests', () => {
    expect(errors.filter((error) => !/Failed to load resource: the server responded with a status of 401/.test(error))).toEqual([]);
  });
});
