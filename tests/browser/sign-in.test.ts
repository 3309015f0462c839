/**
 * The app's sign-in for the companion's admin screens: a one-time link (printed by `hearth
 * serve` and `hearth open`) becomes an HttpOnly cookie; chat needs none of it.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { DESKTOP, PHONE, launch, screenshot, watch } from './harness.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({ withModel: true });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('signing the app in', () => {
  it('before: the server page says how to sign in; after the link: it shows the details, and the code is gone from the address', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors = watch(page);
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));

    await page.goto(`${server.url}/server`);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'hearth open' }).count()).toBe(1);
    expect(await page.getByTestId('models-dirs').count()).toBe(0);
    await screenshot(page, 'server-needs-sign-in-desktop');

    const link = await newSignInLink(server);
    const code = link.split('#')[1]!;
    await signIn(page, link);
    await expect.poll(() => page.getByTestId('models-dirs').innerText()).toContain(`${server.dataDir}/models`);
    expect(page.url()).toBe(`${server.url}/server`);
    // The code never reached a server in a URL, and the session cookie is out of the page's reach.
    expect(urls.filter((url) => url.includes(code))).toEqual([]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = await context.cookies(`${server.url}/admin/status`);
    expect(cookies.map((cookie) => ({ httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, path: cookie.path }))).toEqual([
      { httpOnly: true, sameSite: 'Strict', path: '/admin' },
    ]);

    // The admin actions work signed in: load a model from the page.
    await page.getByRole('button', { name: 'Load tiny' }).click();
    await page.getByRole('listitem', { name: 'tiny (loaded)', exact: true }).waitFor();
    expect(errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
    await context.close();
  });

  it('a used link is refused with a way forward', async () => {
    const link = await newSignInLink(server);
    const first = await browser.newContext({ viewport: DESKTOP });
    await signIn(await first.newPage(), link);
    await first.close();
    for (const [name, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        await page.goto(link);
        await page.getByRole('alert').filter({ hasText: 'already used or has expired' }).waitFor();
        expect(await page.getByText('hearth open').count()).toBeGreaterThan(0);
        expect(page.url()).toBe(`${server.url}/sign-in`);
        await screenshot(page, `sign-in-refused-${name}-${colorScheme}`);
        await context.close();
      }
    }
  });
});
