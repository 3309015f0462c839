/**
 * Load progress: the companion reports node-llama-cpp's load progress over its status stream,
 * and the reply and the picker say "Loading N%" instead of a silent "Thinking…". The Server page
 * shows each loaded model's memory against the budget and a live chart, and unloads it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { startServerWithSlowModel } from './slow-model.js';
import { adminStatus, chooseModel, newSignInLink, replyEnds, send, setSetting } from './app-helpers.js';
import { launch, open, screenshot } from './harness.js';

let server: RunningServer;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  server = await startServerWithSlowModel();
  browser = await launch();
  // Load progress comes over an admin route: the app signs in through a link first.
  ({ page, errors } = await open(browser, { signIn: await newSignInLink(server), url: server.url }));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Records every "Loading N%" the page shows from now on (they may last only a moment). */
async function recordLoading(): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { loadingSeen: string[] }).loadingSeen = seen;
    const look = () => {
      for (const element of document.querySelectorAll('[data-testid="reply-loading"], #model-picker-detail, button')) {
        const text = (element.textContent ?? '').trim();
        if (/^Loading \d+%$/.test(text) && seen.at(-1) !== text) seen.push(text);
      }
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { loadingSeen: string[] }).loadingSeen);
}

describe('loading a model', () => {
  it('shows "Loading N%" in the reply and the picker while the companion loads it', async () => {
    await chooseModel(page, 'companion:slow');
    await setSetting(page, 'Max tokens', '8');
    const seen = await recordLoading();
    await send(page, 'Wake up, slow model');
    await page.getByTestId('reply-loading').waitFor({ timeout: 30_000 });
    await screenshot(page, 'chat-loading');
    await replyEnds(page);
    const texts = await seen();
    expect(texts.length).toBeGreaterThan(0);
    const percents = texts.map((text) => Number(/(\d+)%/.exec(text)![1]));
    expect(percents.every((percent) => percent >= 0 && percent <= 100)).toBe(true);
    // The picker says the model is loaded once it is.
    await expect.poll(() => page.locator('#model-picker-detail').innerText()).toMatch(/loaded$/);
  });
});

describe('the Server page', () => {
  it("shows each loaded model's memory against the budget and a live chart, and unloads it", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Server' }).click();
    const card = page.getByRole('listitem', { name: 'slow (loaded)' });
    await card.waitFor();
    const status = await adminStatus(server.url);
    expect(status.loaded.map((model) => model.id)).toEqual(['slow']);
    await expect.poll(() => card.getByRole('img').getAttribute('aria-label')).toMatch(/^slow: [\d.]+ tokens per second now/);
    await expect.poll(() => page.getByTestId('memory-budget').innerText()).toMatch(/^[\d.]+ MB of [\d.]+ GB memory budget in use/);
    expect(await card.locator('.facts').innerText()).toMatch(/^[\d.]+ MB memory · \d+ threads? · /);
    await screenshot(page, 'server-activity');

    await card.getByRole('button', { name: 'Unload slow' }).click();
    await expect.poll(() => card.count()).toBe(0);
    expect((await adminStatus(server.url)).loaded).toEqual([]);

    const seen = await recordLoading();
    await page.getByRole('button', { name: 'Load slow' }).click();
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect((await seen()).length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});
