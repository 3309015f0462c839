/**
 * A companion with `server.auth.required: true`, in real Chromium: the app says it needs a key,
 * a wrong key is refused with the companion's message and not kept, the right key is kept (only
 * its prefix shown), sent as a Bearer header on API requests and never to /admin/*, and the
 * text typed in the composer before all this is what gets sent and answered.
 */
import { describe, expect, it } from 'vitest';
import { runHearth } from '../helpers/hearth-cli.js';
import { keyRequiredDataDir, startServer } from '../helpers/server.js';
import { replyEnds, setSetting } from './app-helpers.js';
import { screenshot, sharedBrowserApp } from './harness.js';

let key: string;
/** The companion's origin, known once it runs (the page's first requests come before the app is shared). */
let origin: string;
/** Every request the page made to the companion, with its Authorization header. */
const requests: { path: string; authorization: string | undefined; url: string }[] = [];

const DRAFT = 'Typed before the key was given: say hello.';
const WRONG = `hth_${'W'.repeat(43)}`;

const app = sharedBrowserApp({
  async server() {
    const dataDir = await keyRequiredDataDir({ withModel: true });
    const created = await runHearth(['keys', 'create', '--label', 'browser-test', '--scope', 'inference', '--data-dir', dataDir]);
    expect(created.code, created.stderr).toBe(0);
    key = created.stdout.trim();
    expect(key).toMatch(/^hth_[A-Za-z0-9_-]{40,}$/);
    const server = await startServer({ dataDir });
    origin = server.url;
    return server;
  },
  page: {
    colorScheme: 'light',
    onContext: (context) =>
      context.on('request', async (request) => {
        const url = new URL(request.url());
        if (url.origin !== origin) return;
        const entry = { path: url.pathname, url: request.url(), authorization: undefined as string | undefined };
        requests.push(entry);
        // A request still starting when the browser closes has no headers to read any more.
        entry.authorization = (await request.allHeaders().catch((): Record<string, string> => ({}))).authorization;
      }),
  },
});

const status = () => app.page.getAttribute('.status', 'data-status');
/** The password field labelled "Access key" (its section carries the same name). */
const keyField = () => app.page.locator('input').and(app.page.getByLabel('Access key', { exact: true }));

describe('a companion that requires an access key', () => {
  it('is shown as needing a key, while the composer keeps what is typed', async () => {
    await expect.poll(status).toBe('auth');
    expect(await app.page.locator('.status').getAttribute('href')).toBe('/server#access-key');
    await app.page.getByRole('status').filter({ hasText: 'The companion asks for an access key' }).waitFor();
    const box = app.page.getByLabel('Message', { exact: true });
    await box.fill(DRAFT);
    // No model can answer yet: Enter sends nothing and the text stays.
    await box.press('Enter');
    expect(await box.inputValue()).toBe(DRAFT);
    expect(await app.page.locator('article').count()).toBe(0);
  });

  it("leads from the status indicator to the key form, which refuses a wrong key with the companion's message", async () => {
    await app.page.locator('.status').click();
    await app.page.waitForURL(`${app.server.url}/server#access-key`);
    const input = keyField();
    await input.waitFor();
    await expect.poll(() => app.page.evaluate(() => document.activeElement?.id)).toBe('access-key-input');
    expect(await input.getAttribute('type')).toBe('password');
    expect(await app.page.getByTestId('server-status').innerText()).toMatch(/^needs an access key — No key is saved in this browser\.$/);

    await input.fill(WRONG);
    await app.page.getByRole('button', { name: 'Save key' }).click();
    const alert = app.page.locator('#access-key-error');
    await alert.waitFor();
    // The companion's words, without Markdown backticks, with the command as it runs on that machine.
    expect(await alert.innerText()).toBe('The access key is not a valid key. Check the key, or create a new one with npm run hearth -- keys create.');
    expect(await app.page.evaluate(() => localStorage.getItem('hearth.access-key'))).toBeNull();
    expect(await status()).toBe('auth');
    await screenshot(app.page, 'auth-needed');
  });

  it('keeps the right key, shows only its prefix and turns connected', async () => {
    const input = keyField();
    await input.fill(key);
    await app.page.getByRole('button', { name: 'Save key' }).click();
    await app.page.getByTestId('key-prefix').waitFor();
    expect(await app.page.getByTestId('key-prefix').innerText()).toBe(`${key.slice(0, 10)}…`);
    await expect.poll(status).toBe('connected');
    expect(await app.page.locator('#access-key-error').count()).toBe(0);
    expect(await keyField().count()).toBe(0);
    await app.page.getByRole('button', { name: 'Forget key' }).waitFor();
    // The key is in this browser's storage and nowhere on the page.
    expect(await app.page.evaluate(() => localStorage.getItem('hearth.access-key'))).toBe(key);
    expect(await app.page.content()).not.toContain(key.slice(10));
    await screenshot(app.page, 'auth-saved');
  });

  it('streams a reply to the text typed before the key was given', async () => {
    await app.page.getByRole('link', { name: 'Back to the chat' }).click();
    await app.page.waitForURL(`${app.server.url}/`);
    const box = app.page.getByLabel('Message', { exact: true });
    expect(await box.inputValue()).toBe(DRAFT);
    // The companion's models are offered now that the API lets this browser in.
    await expect.poll(() => app.page.locator('#model-picker').getAttribute('data-value')).toBe('companion:tiny');
    await setSetting(app.page, 'Max tokens', '24');
    await box.press('Enter');
    const text = await replyEnds(app.page);
    expect(text.length).toBeGreaterThan(0);
    expect(await app.page.locator('article[data-role="user"] .plain').innerText()).toBe(DRAFT);
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
    expect(app.errors.filter((error) => !/Failed to load resource: the server responded with a status of 401/.test(error))).toEqual([]);
  });
});
