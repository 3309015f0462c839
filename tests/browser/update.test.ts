/**
 * A new version is announced, not swapped in silently: the companion serves a copy of the
 * built app, the copy's service worker changes, and the page offers "Reload".
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger } from '../../companion/src/logger.js';
import { createServices, type Services } from '../../companion/src/services.js';
import { newDataDir } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { launch, open, screenshot, waitForServiceWorker } from './harness.js';

const BUILT = fileURLToPath(new URL('../../build/web', import.meta.url));

let webRoot: string;
let services: Services;
let app: FastifyInstance;
let url: string;
let browser: Browser;

beforeAll(async () => {
  webRoot = tempFolder('web');
  cpSync(BUILT, webRoot, { recursive: true });
  services = await createServices({ dataDir: await newDataDir(), externalSources: false, log: silentLogger, version: 'test' });
  app = await buildApp({ services, webRoot });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await services?.close();
});

describe('a new version of the app', () => {
  it('shows an "update available" prompt and switches only when the user reloads', async () => {
    const { context, page, errors } = await open(browser, { url });
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
    expect(first).toBe(`${url}/sw.js`);
    expect(await prompt.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
