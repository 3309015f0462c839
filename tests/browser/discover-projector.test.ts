/**
 * Discover shows which files come with a multimodal projector ("Sees images", the size counting
 * it), and downloading one brings the projector into the models folder beside the model, so the
 * model is listed as reading images at once.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubFixture, type HubFixture } from '../fixtures/hub/server.js';
import { tinyModelPath, tinyVisionModelPaths } from '../helpers/models.js';
import { hubCompanion } from './app-helpers.js';
import { SCHEMES, screenshot, sharedBrowserApp, SIZES } from './harness.js';

let hub: HubFixture;

beforeAll(async () => {
  const vision = await tinyVisionModelPaths();
  hub = await startHubFixture([
    {
      id: 'hearth-test/Seeing-GGUF',
      downloads: 800,
      likes: 9,
      files: { 'tiny-vision-Q4_K_M.gguf': await readFile(vision.model), 'mmproj-F16.gguf': await readFile(vision.projector) },
    },
    { id: 'hearth-test/Blind-GGUF', downloads: 700, likes: 2, files: { 'blind-Q4_K_M.gguf': await readFile(await tinyModelPath()) } },
  ]);
});
afterAll(() => hub?.close());

const app = sharedBrowserApp({
  server: () => hubCompanion(() => hub.url),
  page: { signIn: true, path: '/models#discover' },
});

describe('Discover and projectors', () => {
  it('tags the files that come with a projector, counts it in the size, and downloads it with the model', async () => {
    const results = app.page.getByRole('list', { name: 'Search results' });
    await expect.poll(() => results.locator('h3').allInnerTexts()).toEqual(['hearth-test/Seeing-GGUF', 'hearth-test/Blind-GGUF']);
    for (const id of ['hearth-test/Seeing-GGUF', 'hearth-test/Blind-GGUF'])
      await results.getByRole('listitem', { name: id }).getByRole('button', { name: 'Show files' }).click();
    // One repository's files show at a time: look at the seeing one last.
    const seeing = results.getByRole('listitem', { name: 'hearth-test/Seeing-GGUF' });
    const blind = results.getByRole('listitem', { name: 'hearth-test/Blind-GGUF' });
    await expect.poll(() => blind.locator('.file-name').allInnerTexts()).toEqual(['blind-Q4_K_M.gguf']);
    expect(await blind.locator('.vision').count()).toBe(0);
    expect(await blind.locator('.file .facts').innerText()).not.toContain('projector');
    await seeing.getByRole('button', { name: 'Show files' }).click();
    const file = seeing.getByRole('listitem', { name: 'tiny-vision-Q4_K_M.gguf' });
    await expect.poll(() => file.locator('.vision').allInnerTexts()).toEqual(['Sees images']);
    expect(await file.locator('.vision').getAttribute('title')).toContain('mmproj-F16.gguf');
    expect(await file.locator('.facts').innerText()).toMatch(/^Q4_K_M · [\d.]+ [KM]B · with projector$/);

    for (const [size, viewport] of SIZES)
      for (const scheme of SCHEMES) {
        // The narrowest phone in common use.
        await app.page.setViewportSize(size === 'phone' ? { ...viewport, width: 375 } : viewport);
        await app.page.emulateMedia({ colorScheme: scheme });
        await screenshot(app.page, `discover-projector-${size}-${scheme}`);
      }
    await app.page.emulateMedia({ colorScheme: 'light' });

    await file.getByRole('button', { name: /^Download tiny-vision-Q4_K_M\.gguf/ }).click();
    const done = app.page.getByRole('listitem', { name: 'Download of tiny-vision-Q4_K_M.gguf' });
    await expect.poll(() => done.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
    expect(await done.innerText()).toContain('ready to use as tiny-vision-q4_k_m');
    expect(existsSync(join(app.server.dataDir, 'models', 'mmproj-Seeing-F16.gguf'))).toBe(true);
    const models = (await (await fetch(`${app.server.url}/v1/models`)).json()) as { data: { id: string; capabilities?: string[] }[] };
    expect(models.data.find((model) => model.id === 'tiny-vision-q4_k_m')?.capabilities).toContain('vision');
  });
});
