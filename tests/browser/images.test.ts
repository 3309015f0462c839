/**
 * The Images screen in real Chromium against a real `hearth serve` with tiny generated Stable
 * Diffusion folders and a fixture speaking OpenAI's video API: generate with progress and a
 * result, cancel, edit with a drawn mask, upscale by drag-and-drop, the gallery, and hosted video
 * by quote and confirmation. Screenshots in light and dark, phone and desktop.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVideoFixture, type VideoFixture } from '../fixtures/media/openai-videos.js';
import { imageDataDir, samplePng, SLOW_UNET } from '../helpers/images.js';
import { startServer } from '../helpers/server.js';
import { DESKTOP, PHONE, PICTURES, screenshot, sharedBrowserApp } from './harness.js';

const TOKEN = 'sk-browser-video-key';
let fixture: VideoFixture;
beforeAll(async () => {
  fixture = await startVideoFixture({ token: TOKEN, completeAfter: 2 });
});
afterAll(() => fixture?.close());

const app = sharedBrowserApp({
  server() {
    const dataDir = imageDataDir({ 'tiny-sd': {}, slow: SLOW_UNET });
    writeFileSync(
      join(dataDir, 'config.yaml'),
      `version: 1
images:
  hosted: { enabled: true, monthly_budget_usd: 5 }
media_providers:
  - name: videos
    base_url: ${fixture.url}
    api_key: env:HEARTH_BROWSER_VIDEO_KEY
    poll_interval_seconds: 0.2
    models:
      - { id: sora-2, usd_per_second: 0.1, seconds: [4, 8], sizes: ['1280x720', '720x1280'] }
`,
    );
    return startServer({ dataDir, withModel: false, env: { HEARTH_BROWSER_VIDEO_KEY: TOKEN } });
  },
});

async function openImages(viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const { context, page, errors } = await app.open('/images', { viewport, colorScheme });
  await page.getByLabel('Image model').waitFor();
  await page.waitForFunction(() => (document.querySelector('#image-model') as HTMLSelectElement | null)?.value);
  return { page, errors, close: () => context.close() };
}

async function generate(page: Page, fields: { model: string; prompt: string; size?: string; steps?: string; seed?: string }) {
  await page.getByLabel('Image model').selectOption(fields.model);
  await page.getByLabel('Prompt', { exact: true }).fill(fields.prompt);
  if (fields.size) await page.getByLabel('Size').fill(fields.size);
  if (fields.steps) await page.getByLabel('Steps').fill(fields.steps);
  if (fields.seed) await page.getByLabel('Seed').fill(fields.seed);
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
}

const naturalWidth = (page: Page) =>
  page
    .getByTestId('image-result')
    .first()
    .evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth);

describe('the Images screen', () => {
  it('lists models with capabilities, generates with progress, and keeps the result in the gallery', async () => {
    const { page, errors, close } = await openImages();
    await page.getByLabel('Image model').selectOption('tiny-sd');
    await expect.poll(() => page.getByRole('list', { name: 'Capabilities of tiny-sd' }).innerText()).toMatch(/generate[\s\S]*negative prompt/);
    await page.getByLabel('Negative prompt').fill('blurry');
    await generate(page, { model: 'tiny-sd', prompt: 'a cosy hearth', size: '64x48', steps: '12', seed: '42' });
    await page.getByTestId('image-result').waitFor();
    await expect.poll(() => naturalWidth(page)).toBe(64);
    await expect.poll(() => page.locator('.caption').first().innerText()).toContain('seed 42');
    await expect
      .poll(() =>
        page
          .getByTestId('gallery-item')
          .first()
          .locator('img')
          .evaluate((image: HTMLImageElement) => image.naturalWidth),
      )
      .toBe(64);
    await screenshot(page, 'images-generate-desktop-light');
    expect(errors).toEqual([]);
    await close();
  });

  it('shows progress and a preview while working, and cancels', async () => {
    const { page, close } = await openImages();
    await generate(page, { model: 'slow', prompt: 'a very slow fire', size: '256x256', steps: '150' });
    await page.locator('[data-testid="image-progress"][data-stage="generating"]').waitFor();
    await page.getByTestId('image-preview').waitFor();
    await expect.poll(() => page.getByRole('progressbar', { name: 'Image progress' }).getAttribute('value')).not.toBeNull();
    await screenshot(page, 'images-progress-desktop-light');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('alert').filter({ hasText: 'Cancelled.' }).waitFor();
    await expect.poll(() => page.getByTestId('gallery-item').first().getAttribute('data-status')).toBe('cancelled');
    await close();
  });

  it('edits a picture with a drawn mask', async () => {
    const { page, errors, close } = await openImages();
    await page.getByRole('tab', { name: 'Edit' }).click();
    await page.locator('input[type="file"]').setInputFiles({ name: 'source.png', mimeType: 'image/png', buffer: await samplePng(96, 64) });
    const canvas = page.getByTestId('mask-canvas');
    await canvas.waitFor();
    await expect.poll(() => canvas.evaluate((element: HTMLCanvasElement) => element.width)).toBe(96);
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.3);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.7, { steps: 8 });
    await page.mouse.up();
    await expect.poll(() => page.getByTestId('mask-state').innerText()).toContain('Painted areas will be repainted');
    await page.getByLabel('Prompt', { exact: true }).fill('a red house');
    await page.getByLabel('Steps').fill('4');
    await screenshot(page, 'images-edit-desktop-light');
    await page.getByRole('button', { name: 'Edit picture' }).click();
    await page.getByTestId('image-result').waitFor();
    await expect.poll(() => naturalWidth(page)).toBe(96);
    expect(errors).toEqual([]);
    await close();
  });

  it('upscales a picture dropped on the drop zone', async () => {
    const { page, close } = await openImages();
    await page.getByRole('tab', { name: 'Upscale' }).click();
    await page.getByLabel('Image model').selectOption('lanczos');
    const png = (await samplePng(40, 30)).toString('base64');
    await page.evaluate((b64) => {
      const bytes = Uint8Array.from(atob(b64), (char) => char.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'dropped.png', { type: 'image/png' }));
      const zone = document.querySelector('[data-testid="drop-zone"]')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, png);
    await expect.poll(() => page.getByTestId('drop-zone').innerText()).toContain('dropped.png');
    await page.getByLabel('Scale', { exact: true }).selectOption('3');
    await page.getByRole('button', { name: 'Upscale', exact: true }).click();
    await page.getByTestId('image-result').waitFor();
    await expect.poll(() => naturalWidth(page)).toBe(120);
    await close();
  });

  it('quotes a hosted video, asks for confirmation, and shows the copied video', async () => {
    const { page, errors, close } = await openImages();
    await page.getByRole('tab', { name: 'Video' }).click();
    await page.getByLabel('Video prompt').fill('Embers rising in the dark');
    await page.getByLabel('Length').selectOption('8');
    await page.getByRole('button', { name: 'Get a quote' }).click();
    const quote = page.getByTestId('video-quote');
    await quote.waitFor();
    await expect.poll(() => quote.innerText()).toMatch(/Quote: \$0\.80[\s\S]*8 s of 1280x720 video with sora-2 at videos/);
    expect(fixture.requests.filter((request) => request.method === 'POST')).toHaveLength(0);
    await screenshot(page, 'images-video-quote-desktop-light');
    await page.getByRole('button', { name: 'Confirm and pay $0.80' }).click();
    await page.locator('[data-testid="video-job"][data-status="completed"] video').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('video-budget').innerText()).toContain('$0.80 of $5.00 spent');
    expect(fixture.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    expect(errors).toEqual([]);
    await close();
  });

  it('fits a phone and reads well in dark mode', async () => {
    // The phone in light runs the checks; the other looks only make pictures.
    const looks = (
      [
        [PHONE, 'light', 'images-generate-phone-light'],
        [PHONE, 'dark', 'images-generate-phone-dark'],
        [DESKTOP, 'dark', 'images-generate-desktop-dark'],
      ] as const
    ).filter(([viewport, scheme]) => PICTURES || (viewport === PHONE && scheme === 'light'));
    for (const [viewport, scheme, name] of looks) {
      const { page, close } = await openImages(viewport, scheme);
      await generate(page, { model: 'tiny-sd', prompt: `a hearth (${name})`, size: '64x64', steps: '4' });
      await page.getByTestId('image-result').waitFor();
      const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      expect(scroll).toBeLessThanOrEqual(width);
      await screenshot(page, name);
      if (viewport === PHONE && scheme === 'dark') {
        await page.getByRole('tab', { name: 'Video' }).click();
        await page.getByLabel('Video prompt').waitFor();
        await screenshot(page, 'images-video-phone-dark');
      }
      await close();
    }
  });
});
