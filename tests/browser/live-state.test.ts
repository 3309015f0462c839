/**
 * The app follows the companion without a reload, in real Chromium against a real `hearth serve`:
 * a model loaded or unloaded by another client shows its new state on the Models screen, and when
 * the companion stops the app says so and shows no model as loaded.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink } from './app-helpers.js';
import { launch, open } from './harness.js';

let server: RunningServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  ({ page } = await open(browser, `${server.url}/models`, { signInLink: await newSignInLink(server) }));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const tag = () => page.getByRole('listitem', { name: 'tiny' }).locator('.tag').first().innerText();
const admin = async (action: 'load' | 'unload') => {
  const response = await fetch(`${server.url}/admin/models/tiny/${action}`, { method: 'POST' });
  expect(response.status, await response.text()).toBe(200);
};

describe('live state', () => {
  it('shows a model loaded and unloaded elsewhere, without a reload', async () => {
    await expect.poll(tag).toBe('not loaded');
    await admin('load');
    await expect.poll(tag, { timeout: 15_000 }).toBe('loaded');
    await admin('unload');
    await expect.poll(tag, { timeout: 15_000 }).toBe('not loaded');
  });

  it('shows no model as loaded once the companion stops, and says it is gone', async () => {
    await admin('load');
    await expect.poll(tag, { timeout: 15_000 }).toBe('loaded');
    await server.stop();
    await expect.poll(() => page.getAttribute('.status', 'data-status'), { timeout: 15_000 }).toBe('unreachable');
    expect(await tag()).toBe('not loaded');
  });
});
