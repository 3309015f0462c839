/**
 * From an empty models folder to a streamed reply without leaving the app: find a model on the
 * (fixture) Hugging Face hub, download it with progress, see it appear in the picker, chat. Then
 * pause, reload, resume and cancel downloads, and search while offline.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubFixture, type HubFixture } from '../fixtures/hub/server.js';
import { chatMetadata, ggufFile } from '../helpers/gguf-header.js';
import { tinyModelPath } from '../helpers/models.js';
import { chosenModel, hubCompanion, replyEnds, send, setSetting } from './app-helpers.js';
import { screenshot, sharedBrowserApp } from './harness.js';

let hub: HubFixture;
const MB = 1024 * 1024;

beforeAll(async () => {
  hub = await startHubFixture([
    {
      id: 'hearth-test/Tiny-Chat-GGUF',
      downloads: 5200,
      likes: 31,
      files: {
        'tiny-chat-Q4_K_M.gguf': await readFile(await tinyModelPath()),
        'tiny-chat-Q8_0.gguf': ggufFile(chatMetadata(), 3 * MB, 7),
        'tiny-chat-F32.gguf': ggufFile(chatMetadata(), 40 * MB, 8),
      },
    },
    { id: 'someone/Popular-7B-GGUF', downloads: 900_000, likes: 1200, files: { 'popular-7b.Q4_K_M.gguf': Buffer.alloc(1000, 1) } },
  ]);
});
afterAll(() => hub?.close());

const app = sharedBrowserApp({
  server: () => hubCompanion(() => hub.url),
  // Downloads are the companion owner's business: the app signs in through a link first.
  page: { signIn: true },
});

const downloadItem = (name: string) => app.page.getByRole('listitem', { name: `Download of ${name}` });

describe('an empty models folder', () => {
  it('leads from the chat to the library, downloads with progress, and chats with the new model', async () => {
    await app.page.getByRole('link', { name: 'Find a model' }).click();
    await app.page.waitForURL(`${app.server.url}/models#discover`);
    // Discover opens with the most downloaded GGUF repositories.
    const results = app.page.getByRole('list', { name: 'Search results' });
    await expect.poll(() => results.locator('h3').allInnerTexts()).toEqual(['someone/Popular-7B-GGUF', 'hearth-test/Tiny-Chat-GGUF']);
    await app.page.getByLabel('Search Hugging Face').fill('tiny');
    await app.page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => results.locator('h3').allInnerTexts()).toEqual(['hearth-test/Tiny-Chat-GGUF']);
    expect(hub.requests.some((path) => path.startsWith('/api/models?search=tiny&filter=gguf&sort=downloads'))).toBe(true);

    const repo = results.getByRole('listitem', { name: 'hearth-test/Tiny-Chat-GGUF' });
    await repo.getByRole('button', { name: 'Show files' }).click();
    const files = repo.getByRole('list', { name: 'Files of hearth-test/Tiny-Chat-GGUF' });
    await expect.poll(() => files.locator('.file-name').allInnerTexts()).toEqual(['tiny-chat-Q4_K_M.gguf', 'tiny-chat-Q8_0.gguf', 'tiny-chat-F32.gguf']);
    expect(await files.locator('.fit').allInnerTexts()).toEqual(['Fits', 'Fits', 'Too big']);
    expect(await files.getByRole('listitem', { name: 'tiny-chat-Q4_K_M.gguf' }).locator('.facts').innerText()).toMatch(/^Q4_K_M · [\d.]+ KB$/);
    await screenshot(app.page, 'library-files');

    hub.throttle(96 * 1024);
    await files.getByRole('button', { name: /^Download tiny-chat-Q4_K_M\.gguf/ }).click();
    const bar = app.page.getByRole('progressbar', { name: 'Downloading tiny-chat-Q4_K_M.gguf' }).first();
    await expect.poll(async () => Number((await bar.getAttribute('value')) ?? 0), { timeout: 20_000, interval: 50 }).toBeGreaterThan(0);
    expect(Number(await bar.getAttribute('value'))).toBeLessThan(Number(await bar.getAttribute('max')));
    await expect.poll(() => downloadItem('tiny-chat-Q4_K_M.gguf').innerText()).toMatch(/KB\/s/);
    await screenshot(app.page, 'library-downloading');
    hub.throttle(0);

    const done = downloadItem('tiny-chat-Q4_K_M.gguf');
    await expect.poll(() => done.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
    expect(await done.innerText()).toContain('ready to use as tiny-chat-q4_k_m');
    await done.getByRole('button', { name: 'Use tiny-chat-q4_k_m in chat' }).click();
    await app.page.waitForURL(`${app.server.url}/`);
    await expect.poll(() => chosenModel(app.page)).toBe('companion:tiny-chat-q4_k_m');
    await setSetting(app.page, 'Max tokens', '12');
    await send(app.page, 'Hello, new model');
    expect((await replyEnds(app.page)).length).toBeGreaterThan(0);
    expect(await app.page.locator('article[data-role="assistant"] .model').last().innerText()).toBe('tiny-chat-q4_k_m');
  });
});

describe('downloads', () => {
  it('pause, survive a reload, resume, and cancel with the partial file removed', async () => {
    await app.page.goto(`${app.server.url}/models#discover`);
    const repo = app.page.getByRole('listitem', { name: 'hearth-test/Tiny-Chat-GGUF' });
    await repo.getByRole('button', { name: 'Show files' }).click();
    hub.throttle(128 * 1024);
    await repo.getByRole('button', { name: /^Download tiny-chat-Q8_0\.gguf/ }).click();
    const item = downloadItem('tiny-chat-Q8_0.gguf');
    await expect.poll(async () => Number((await item.getByRole('progressbar').getAttribute('value')) ?? 0), { timeout: 20_000 }).toBeGreaterThan(0);
    await item.getByRole('button', { name: 'Pause tiny-chat-Q8_0.gguf' }).click();
    await expect.poll(() => item.getAttribute('data-status')).toBe('paused');
    const kept = Number(await item.getByRole('progressbar').getAttribute('value'));
    expect(kept).toBeGreaterThan(0);
    expect(existsSync(join(app.server.dataDir, 'models', 'tiny-chat-Q8_0.gguf.partial'))).toBe(true);

    // The companion keeps the download: a reload shows it paused where it stopped.
    await app.page.reload();
    await expect.poll(() => item.getAttribute('data-status')).toBe('paused');
    expect(Number(await item.getByRole('progressbar').getAttribute('value'))).toBe(kept);
    await screenshot(app.page, 'library-paused');

    await item.getByRole('button', { name: 'Resume tiny-chat-Q8_0.gguf' }).click();
    await expect.poll(() => item.getAttribute('data-status')).toBe('downloading');
    hub.throttle(0);
    await expect.poll(() => item.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
    expect(existsSync(join(app.server.dataDir, 'models', 'tiny-chat-Q8_0.gguf'))).toBe(true);

    // Cancel a third one part-way: nothing of it stays.
    hub.throttle(128 * 1024);
    await repo.getByRole('button', { name: 'Show files' }).click();
    await repo.getByRole('button', { name: /^Download tiny-chat-F32\.gguf/ }).click();
    const big = downloadItem('tiny-chat-F32.gguf');
    await expect.poll(async () => Number((await big.getByRole('progressbar').getAttribute('value')) ?? 0), { timeout: 20_000 }).toBeGreaterThan(0);
    await big.getByRole('button', { name: 'Cancel tiny-chat-F32.gguf' }).click();
    await expect.poll(() => big.getAttribute('data-status')).toBe('cancelled');
    expect(existsSync(join(app.server.dataDir, 'models', 'tiny-chat-F32.gguf.partial'))).toBe(false);
    await big.getByRole('button', { name: 'Clear tiny-chat-F32.gguf from the list' }).click();
    await expect.poll(() => big.count()).toBe(0);
    hub.throttle(0);
  });

  it('removes a downloaded model after asking', async () => {
    await app.page.goto(`${app.server.url}/models`);
    const card = app.page.getByRole('listitem', { name: 'tiny-chat-q8_0', exact: true });
    await card.getByRole('button', { name: 'Remove tiny-chat-q8_0 from this machine' }).click();
    await card.getByRole('button', { name: 'Delete the file' }).click();
    await expect.poll(() => card.count()).toBe(0);
    expect(existsSync(join(app.server.dataDir, 'models', 'tiny-chat-Q8_0.gguf'))).toBe(false);
  });
});

describe('offline', () => {
  it('says at once that searching needs internet', async () => {
    await app.page.goto(`${app.server.url}/models#discover`);
    // The screen's own first search has landed before the network goes.
    await app.page.getByRole('list', { name: 'Search results' }).locator('h3').first().waitFor();
    await app.context.setOffline(true);
    const before = hub.requests.length;
    await app.page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => app.page.getByRole('alert').innerText()).toMatch(/^This device is offline/);
    expect(hub.requests.length).toBe(before);
    await app.context.setOffline(false);
    expect(app.errors.filter((error) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(error))).toEqual([]);
  });
});
