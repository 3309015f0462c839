/**
 * The promise of the app: copy a model into the browser, lose the companion mid-reply, keep
 * chatting in the browser (wllama in the engine worker), reload offline with the companion
 * stopped and find the app, the history and the stored model all there.
 */
import { stat } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models.js';
import { startServerWithSlowModel } from './slow-model.js';
import { assistant, chooseModel, lastReply, pickerGroups, replyEnds, replyStarts, send, setSetting } from './app-helpers.js';
import { screenshot, sharedBrowserApp, waitForServiceWorker } from './harness.js';

/** Every URL the pages and their workers asked for. */
const requested: string[] = [];

const app = sharedBrowserApp({
  server: startServerWithSlowModel,
  page: { colorScheme: 'dark', onContext: (context) => context.on('request', (request) => requested.push(request.url())) },
});
beforeAll(() => waitForServiceWorker(app.page));

describe('a model copied from the companion into the browser', () => {
  it('shows the file size before downloading and a progress bar while it downloads', async () => {
    const size = (await stat(await tinyModelPath())).size;
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
    const card = app.page.getByRole('listitem', { name: 'tiny' }).first();
    const copy = card.getByRole('button', { name: /^Copy tiny to this browser/ });
    // The size comes from HEAD /v1/models/tiny/file, before any byte of the file moves.
    await expect.poll(() => copy.innerText()).toBe(`Copy to this browser (${(size / 1000).toFixed(1)} KB)`);

    // Slow the network so the progress can be seen (and photographed) part-way.
    const cdp = await app.context.newCDPSession(app.page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 160 * 1024, uploadThroughput: -1 });
    await copy.click();
    const bar = app.page.getByRole('progressbar', { name: 'Copying tiny' });
    await bar.waitFor();
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 20_000, interval: 50 }).toBeGreaterThan(0);
    expect(Number(await bar.getAttribute('max'))).toBe(size);
    expect(Number(await bar.getAttribute('value'))).toBeLessThan(size);
    await screenshot(app.page, 'browser-model-download');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

    await card.getByText('Stored in this browser').waitFor({ timeout: 30_000 });
    const stored = app.page.getByRole('listitem', { name: 'tiny' }).nth(1);
    expect(await stored.innerText()).toContain('from companion: tiny');
    await screenshot(app.page, 'model-picker');
  });
});

describe('when the companion goes away', () => {
  it('says so mid-reply, keeps the conversation, and continues with the in-browser model', async () => {
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Chat' }).click();
    // The picker groups models by where they run.
    await expect
      .poll(() => pickerGroups(app.page))
      .toEqual([
        ['This machine', ['companion:slow', 'companion:tiny']],
        ['In this browser', ['wllama:tiny.gguf']],
      ]);
    await chooseModel(app.page, 'companion:tiny');
    await setSetting(app.page, 'Max tokens', '16');
    await send(app.page, 'First, a short one');
    await replyEnds(app.page, 'done');

    await chooseModel(app.page, 'companion:slow');
    await setSetting(app.page, 'Max tokens', '1800');
    await send(app.page, 'Now a long one please');
    await replyStarts(app.page);
    await app.server.stop();

    await replyEnds(app.page, 'interrupted');
    const alert = app.page.getByRole('alert');
    expect(await alert.innerText()).toContain('The companion went away before the reply was finished');
    await expect.poll(() => app.page.getAttribute('.status', 'data-status')).toBe('unreachable');
    await screenshot(app.page, 'companion-lost');

    await setSetting(app.page, 'Max tokens', '24');
    await alert.getByRole('button', { name: 'Continue with tiny (in this browser)' }).click();
    const text = await replyEnds(app.page, 'done', 120_000);
    expect(text.length).toBeGreaterThan(0);
    expect(await lastReply(app.page).locator('.model').innerText()).toBe('tiny · in this browser');
    expect(await app.page.locator('#model-picker').getAttribute('data-value')).toBe('wllama:tiny.gguf');
    expect(await lastReply(app.page).getByTestId('stats').innerText()).toMatch(/^24 tokens · \d+ prompt · [\d.]+ tok\/s/);
    // Nothing the user wrote was lost.
    expect(await app.page.locator('article[data-role="user"] .plain').allInnerTexts()).toEqual(['First, a short one', 'Now a long one please']);
  });
});

describe('offline, with the companion stopped', () => {
  it('reloads from the service worker with the conversations, and chats with the in-browser model', async () => {
    await app.context.setOffline(true);
    await app.page.reload();
    await app.page.getByRole('link', { name: 'Hearth' }).waitFor();
    await expect.poll(() => app.page.getAttribute('.status', 'data-status')).toBe('unreachable');
    expect(await app.page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
    await expect.poll(() => app.page.locator('nav[aria-label="Conversations"] .title').allInnerTexts()).toEqual(['First, a short one']);
    await expect.poll(() => app.page.locator('article[data-role="user"]').count()).toBe(2);
    await expect.poll(() => app.page.locator('#model-picker').getAttribute('data-value')).toBe('wllama:tiny.gguf');

    await send(app.page, 'Still there, offline?');
    const text = await replyEnds(app.page, 'done', 120_000);
    expect(text.length).toBeGreaterThan(0);
    await screenshot(app.page, 'offline-chat-dark');

    // llama.cpp's wasm is part of the app: precached by the service worker, never from a CDN.
    const cached = await app.page.evaluate(async () => {
      const urls: string[] = [];
      for (const name of await caches.keys()) urls.push(...(await (await caches.open(name)).keys()).map((request) => request.url));
      return urls;
    });
    expect(cached.filter((url) => /\/_app\/immutable\/workers\/assets\/wllama-[\w-]+\.wasm/.test(url))).toHaveLength(1);
    expect(requested.filter((url) => !url.startsWith(`${app.server.url}/`) && !/^(blob|data):/.test(url))).toEqual([]);
    expect(requested.some((url) => /wllama-[\w-]+\.wasm/.test(url))).toBe(true);
  });

  it('stops an in-browser reply in the worker, and the engine keeps working', async () => {
    await setSetting(app.page, 'Max tokens', '1800');
    await send(app.page, 'A long one, offline');
    await replyStarts(app.page);
    await app.page.getByRole('button', { name: 'Stop' }).click();
    const stopped = await replyEnds(app.page, 'stopped');
    expect(stopped.length).toBeGreaterThan(0);
    const stoppedReply = assistant(app.page).nth((await assistant(app.page).count()) - 1);

    await setSetting(app.page, 'Max tokens', '8');
    await send(app.page, 'And a short one');
    await replyEnds(app.page, 'done', 60_000);
    expect(await lastReply(app.page).getByTestId('stats').innerText()).toMatch(/^8 tokens/);
    // The worker wrote a later reply to its end: no more text came to the stopped one meanwhile.
    expect((await stoppedReply.locator('.markdown').innerText()).trim()).toBe(stopped);
  });

  it('keeps the stored model across reloads', async () => {
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
    await app.page.getByRole('listitem', { name: 'tiny' }).waitFor();
    await expect
      .poll(() => app.page.getByTestId('wllama-status').innerText())
      .toBe("Ready: runs GGUF model files on this device's processor (slower, works everywhere).");
    await expect.poll(() => app.page.locator('#companion-heading ~ .note').innerText()).toContain("The companion's models are not available");
    await screenshot(app.page, 'offline-models');
  });

  it('opens a page first visited offline (the shell is precached)', async () => {
    const other = await app.context.newPage();
    await other.goto(`${app.server.url}/server`);
    await other.getByRole('heading', { name: 'Server' }).waitFor();
    await expect.poll(() => other.getByTestId('server-status').innerText()).toMatch(/^unreachable/);
    await screenshot(other, 'offline-server');
    await other.close();
  });
});
