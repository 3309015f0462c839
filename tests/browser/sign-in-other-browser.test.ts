/**
 * Signing in a second browser on the same machine without a terminal: the new browser asks, shows
 * a code and waits; the signed-in browser's Server screen lets it in with that code (a wrong code
 * is refused there, a refusal is told to the waiting browser). And a used sign-in link opened
 * again in the browser it signed in just says so and goes on to the app.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink, signIn } from './app-helpers.js';
import { DESKTOP, PHONE, SCHEMES, SIZES, launch, screenshot, watch } from './harness.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer({ withModel: false }), launch()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A browser context signed in through a link, on the Server screen. */
async function signedIn(options: Parameters<Browser['newContext']>[0] = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const page = await context.newPage();
  const errors = watch(page);
  await signIn(page, await newSignInLink(server));
  await page.getByTestId('sign-in-approvals').waitFor();
  return { context, page, errors };
}

/** A signed-out browser context that asked to be let in, on the sign-in page: answers the code it shows. */
async function asking(options: Parameters<Browser['newContext']>[0] = {}): Promise<{ context: BrowserContext; page: Page; errors: string[]; code: string }> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const page = await context.newPage();
  const errors = watch(page);
  await page.goto(`${server.url}/sign-in`);
  await page.getByRole('button', { name: 'Ask a signed-in browser' }).click();
  const shown = await page.getByTestId('sign-in-code').innerText();
  expect(shown).toMatch(/^[A-Z2-9]{3} [A-Z2-9]{3}$/);
  return { context, page, errors, code: shown.replace(' ', '') };
}

async function letIn(page: Page, code: string): Promise<void> {
  await page.getByLabel('Code', { exact: true }).fill(code);
  await page.getByRole('button', { name: 'Let it in' }).click();
}

describe('a second browser on this machine', () => {
  it('asks, shows a code, and is signed in once the signed-in browser types that code', async () => {
    const owner = await signedIn();
    const other = await asking();
    try {
      // The signed-in browser lists the waiting browser, without its code.
      const waiting = owner.page.getByRole('list', { name: 'Browsers waiting to be signed in' });
      await waiting.getByRole('listitem').first().waitFor();
      expect(await waiting.innerText()).not.toContain(other.code);
      await other.page.getByRole('status').filter({ hasText: 'Waiting for the other browser' }).waitFor();

      // A wrong code lets nobody in.
      await letIn(owner.page, other.code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
      await owner.page.getByRole('alert').filter({ hasText: 'No browser is waiting to be signed in with this code' }).waitFor();
      expect(await other.page.getByTestId('sign-in-code').isVisible()).toBe(true);

      // Typed as a person might, lower case with a space.
      await letIn(owner.page, `${other.code.slice(0, 3).toLowerCase()} ${other.code.slice(3).toLowerCase()}`);
      await owner.page.getByRole('status').filter({ hasText: 'Let in' }).waitFor();
      await other.page.getByRole('status').filter({ hasText: 'This browser is signed in' }).waitFor();
      await other.page.goto(`${server.url}/server`);
      await other.page.getByTestId('signed-in').waitFor();
      await expect.poll(() => other.page.getByTestId('models-dirs').innerText()).toContain(server.dataDir);
      const cookies = await other.context.cookies(`${server.url}/admin/status`);
      expect(cookies.map((cookie) => [cookie.httpOnly, cookie.sameSite])).toEqual([[true, 'Strict']]);
      // Approving the same code again lets nobody else in.
      await letIn(owner.page, other.code);
      await owner.page.getByRole('alert').filter({ hasText: 'No browser is waiting' }).waitFor();
      expect(other.errors).toEqual([]);
    } finally {
      await Promise.all([owner.context.close(), other.context.close()]);
    }
  });

  it('a refused browser is told so and may ask again', async () => {
    // The other browser asks first: the owner's Server screen lists it as it opens, instead of at
    // its next look a few seconds later (the test above follows the list while it is open).
    const other = await asking();
    const owner = await signedIn();
    try {
      const refuse = owner.page.getByRole('list', { name: 'Browsers waiting to be signed in' }).getByRole('button', { name: 'Refuse' });
      await refuse.first().waitFor();
      await refuse.first().click();
      await other.page.getByRole('alert').filter({ hasText: 'The signed-in browser refused.' }).waitFor();
      await other.page.getByRole('button', { name: 'Ask again' }).click();
      await other.page.getByTestId('sign-in-code').waitFor();
      expect(await other.page.getByTestId('sign-in-code').innerText()).not.toBe('');
      await other.page.getByRole('button', { name: 'Cancel' }).click();
      await other.page.getByRole('button', { name: 'Ask a signed-in browser' }).waitFor();
      expect(other.errors).toEqual([]);
    } finally {
      await Promise.all([owner.context.close(), other.context.close()]);
    }
  });

  it('looks right waiting and approving, light and dark, phone and desktop', async () => {
    for (const [name, viewport] of SIZES) {
      for (const colorScheme of SCHEMES) {
        // Asked first, listed as the owner's screen opens (as in the test above).
        const other = await asking({ viewport, colorScheme });
        const owner = await signedIn({ viewport, colorScheme });
        try {
          await owner.page.getByRole('list', { name: 'Browsers waiting to be signed in' }).getByRole('listitem').first().waitFor();
          await screenshot(other.page, `sign-in-ask-${name}-${colorScheme}`);
          await owner.page.getByTestId('sign-in-approvals').scrollIntoViewIfNeeded();
          await screenshot(owner.page, `sign-in-approvals-${name}-${colorScheme}`);
          await letIn(owner.page, other.code);
          await other.page.getByRole('status').filter({ hasText: 'This browser is signed in' }).waitFor();
        } finally {
          await Promise.all([owner.context.close(), other.context.close()]);
        }
      }
    }
  });
});

describe('a used link opened again', () => {
  it('in the browser it signed in says so and goes on to the app, with no error', async () => {
    const link = await newSignInLink(server);
    for (const [name, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      for (const colorScheme of SCHEMES) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        const errors = watch(page);
        // The first of these uses the link; every later one opens it used, signed in with another link.
        if (name !== 'desktop' || colorScheme !== 'light') await signIn(page, await newSignInLink(server));
        await page.goto(link);
        if (name === 'desktop' && colorScheme === 'light') {
          await page.waitForURL((url) => url.pathname === '/server');
          await page.goto(link);
        }
        await page.getByTestId('already-signed-in').waitFor();
        expect(await page.getByRole('alert').count()).toBe(0);
        await screenshot(page, `sign-in-already-${name}-${colorScheme}`);
        await page.waitForURL((url) => url.pathname === '/server' && url.hash === '');
        await page.getByTestId('signed-in').waitFor();
        expect(errors.filter((error) => !error.includes('401'))).toEqual([]);
        await context.close();
      }
    }
  });
});
