/**
 * Load progress: the companion reports node-llama-cpp's load progress over its status stream,
 * and the reply and the picker say "Loading N%" instead of a silent "Thinking…". The Server page
 * shows each loaded model's memory against the budget and a live chart, and unloads it.
 */
import { describe, expect, it } from 'vitest';
import { startServerWithSlowModel } from './slow-model.js';
import { adminStatus, chooseModel, replyEnds, send, setSetting } from './app-helpers.js';
import { screenshot, sharedBrowserApp } from './harness.js';

// Load progress comes over an admin route: the app signs in through a link first.
const app = sharedBrowserApp({ server: startServerWithSlowModel, page: { signIn: true } });

/** Records every "Loading N%" the page shows from now on (they may last only a moment). */
async function recordLoading(): Promise<() => Promise<string[]>> {
  await app.page.evaluate(() => {
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
  return () => app.page.evaluate(() => (window as unknown as { loadingSeen: string[] }).loadingSeen);
}

describe('loading a model', () => {
  it('shows "Loading N%" in the reply and the picker while the companion loads it', async () => {
    await chooseModel(app.page, 'companion:slow');
    await setSetting(app.page, 'Max tokens', '8');
    const seen = await recordLoading();
    await send(app.page, 'Wake up, slow model');
    await app.page.getByTestId('reply-loading').waitFor({ timeout: 30_000 });
    await screenshot(app.page, 'chat-loading');
    await replyEnds(app.page);
    const texts = await seen();
    expect(texts.length).toBeGreaterThan(0);
    const percents = texts.map((text) => Number(/(\d+)%/.exec(text)![1]));
    expect(percents.every((percent) => percent >= 0 && percent <= 100)).toBe(true);
    // The picker says the model is loaded once it is.
    await expect.poll(() => app.page.locator('#model-picker-detail').innerText()).toMatch(/loaded$/);
  });
});

describe('the Server page', () => {
  it("shows each loaded model's memory against the budget and a live chart, and unloads it", async () => {
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Server' }).click();
    const card = app.page.getByRole('listitem', { name: 'slow (loaded)' });
    await card.waitFor();
    const status = await adminStatus(app.server.url);
    expect(status.loaded.map((model) => model.id)).toEqual(['slow']);
    await expect.poll(() => card.getByRole('img').getAttribute('aria-label')).toMatch(/^slow: [\d.]+ tokens per second now/);
    await expect.poll(() => app.page.getByTestId('memory-budget').innerText()).toMatch(/^[\d.]+ MB of [\d.]+ GB memory budget in use/);
    expect(await card.locator('.facts').innerText()).toMatch(/^[\d.]+ MB memory · \d+ threads? · /);
    await screenshot(app.page, 'server-activity');

    await card.getByRole('button', { name: 'Unload slow' }).click();
    await expect.poll(() => card.count()).toBe(0);
    expect((await adminStatus(app.server.url)).loaded).toEqual([]);

    const seen = await recordLoading();
    await app.page.getByRole('button', { name: 'Load slow' }).click();
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect((await seen()).length).toBeGreaterThan(0);
    expect(app.errors).toEqual([]);
  });
});
