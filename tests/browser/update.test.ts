/**
 * A new version is announced, not swapped in silently: the companion serves a copy of the
 * built app, the copy's service worker changes, and the page offers "Reload".
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempFolder } from '../helpers/temp.js';
import { screenshot, waitForServiceWorker, open } from './harness.js';
import { BUILT_WEB, startInProcessApp, type InProcessApp } from './in-process.js';

let webRoot: string;
let companion: InProcessApp;
beforeAll(async () => {
  // A copy of the built app, so the test can change its service worker.
  webRoot = tempFolder('web');
  cpSync(BUILT_WEB, webRoot, { recursive: true });
  companion = await startInProcessApp({ webRoot });
});
afterAll(() => companion?.close());

describe('a new version of the app', () => {
  it('shows an "update available" prompt and switches only when the user reloads', async () => {
    const { context, page, errors } = await open(companion.browser, companion.url);
    await waitForServiceWorker(page);
    const first = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL);
    const prompt = page.getByText('A new version of Hearth is available.');
    expect(await prompt.count()).toBe(0);

    // Publish a "new version": the service worker script changes.
    const sw = join(webRoot, 'sw.js');
    writeFileSync(sw, `${readFileSync(sw, 'utf8')}\n// version 2\n`);
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update());
    await prompt.waitFor({ timeout: 30_000 });
    await screenshot(page, 'update-available');
    // Nothing switched by itself: the old worker still controls the page.
    expect(await page.evaluate(() => navigator.serviceWorker.getRegistration().then((registration) => !!registration?.waiting))).toBe(true);

    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Reload' }).click()]);
    await page.getByRole('link', { name: 'Hearth' }).waitFor();
    const after = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration();
      return { waiting: !!registration?.waiting, controlled: !!navigator.serviceWorker.controller };
    });
    expect(after).toEqual({ waiting: false, controlled: true });
    expect(first).toBe(`${companion.url}/sw.js`);
    expect(await prompt.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
