/**
 * Images in the app's chat, in real Chromium against a real `hearth serve` whose models are the
 * tiny text-only model and the tiny vision model with its generated projector: attaching by the
 * button's file picker, by pasting and by dropping, thumbnails that open full size and can be
 * removed, a large picture scaled down in the browser, the refusal (before anything is sent) for a
 * model that cannot read images, the request's image_url parts, the reply, and the images kept
 * in the transcript after a reload and offline.
 *
 * Only the llama-server engine runs a projector. When its build is ready (the server-engine
 * project makes it; it is cached outside the clone), the companion runs on it and the vision
 * model answers. Without the build this file does not build it (that takes many minutes): the
 * companion runs in process, and the reply test checks instead that the companion refused the
 * images with the reason and that the message and its images came back to the composer.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { readBuildState, serverBuildPaths } from '../../companion/src/inference/server/build.js';
import { tinyVisionModelPaths } from '../helpers/models.js';
import { newDataDir, startServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { chooseModel, lastReply, replyEnds, setSetting, storedConversations, storedMedia } from './app-helpers.js';
import { DESKTOP, SCHEMES, screenshot, sharedBrowserApp, SIZES, waitForServiceWorker } from './harness.js';

const onEngine = readBuildState(serverBuildPaths(), process.env, () => undefined).state === 'ready';

const app = sharedBrowserApp({
  async server() {
    const dataDir = await newDataDir(true);
    const { model, projector } = await tinyVisionModelPaths();
    // A folder of their own: a projector pairs with every model in its folder (the tiny model is in models/).
    mkdirSync(join(dataDir, 'models', 'vision'));
    copyFileSync(model, join(dataDir, 'models', 'vision', 'tiny-vision.gguf'));
    copyFileSync(projector, join(dataDir, 'models', 'vision', 'mmproj-tiny-vision.gguf'));
    return startServer({ dataDir, env: { HEARTH_ENGINE: onEngine ? 'server' : 'in-process' } });
  },
  page: { colorScheme: 'light' },
});

const files = { small: '', large: '' };
let smallPng: Buffer;
beforeAll(async () => {
  const folder = tempFolder('attachments');
  smallPng = await sharp({ create: { width: 32, height: 20, channels: 3, background: { r: 200, g: 40, b: 20 } } })
    .png()
    .toBuffer();
  const large = await sharp({ create: { width: 3000, height: 1200, channels: 3, background: { r: 20, g: 60, b: 200 } } })
    .png()
    .toBuffer();
  files.small = join(folder, 'small.png');
  files.large = join(folder, 'large.png');
  writeFileSync(files.small, smallPng);
  writeFileSync(files.large, large);
});

const composer = (page: Page) => page.getByRole('form', { name: 'Send a message' });
const pending = (page: Page) => page.getByRole('list', { name: 'Images to send' }).getByRole('listitem');
const refusal = (page: Page) => page.locator('#composer-refusal');

/** Attaches a file through the Attach button's file picker, as a person does. */
async function attachByButton(page: Page, path: string): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Attach images' }).click();
  await (await chooser).setFiles(path);
}

/** Pastes a PNG into the message box, as the clipboard hands one over. */
async function paste(page: Page, bytes: Buffer, name: string): Promise<void> {
  await page.locator('#composer-text').evaluate(
    (box, { bytes, name }) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }));
      box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    { bytes: [...bytes], name },
  );
}

/** Drags a PNG over the conversation and drops it there. */
async function drop(page: Page, bytes: Buffer, name: string): Promise<void> {
  await page.locator('section.conversation .messages').evaluate(
    (target, { bytes, name }) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }));
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
    },
    { bytes: [...bytes], name },
  );
}

/** Pictures of what the page shows now, in each width (the phone at 375 px) and colour scheme, then back to the desktop in light. */
async function pictures(page: Page, name: string): Promise<void> {
  for (const [size, viewport] of SIZES)
    for (const scheme of SCHEMES) {
      await page.setViewportSize(size === 'phone' ? { ...viewport, width: 375 } : viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `attachments-${name}-${size}-${scheme}`);
    }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The natural widths of the `count` images a list shows, once there are that many and every one has loaded. */
async function loadedWidths(page: Page, selector: string, count: number): Promise<number[]> {
  await page.waitForFunction(
    ({ css, count }) => {
      const images = [...document.querySelectorAll<HTMLImageElement>(css)];
      return images.length === count && images.every((image) => image.complete && image.naturalWidth > 0);
    },
    { css: selector, count },
  );
  return page.locator(selector).evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth));
}

describe('attaching images in the composer', () => {
  it('a model that cannot read images says so before sending, names one that can, and keeps the message', async () => {
    const { page } = app;
    await chooseModel(page, 'companion:tiny');
    await attachByButton(page, files.small);
    await expect.poll(() => pending(page).count()).toBe(1);
    await page.getByLabel('Message', { exact: true }).fill('What colour is this?');

    await expect.poll(() => refusal(page).innerText()).toMatch(/^tiny cannot read images: it has no vision projector/);
    expect(await refusal(page).innerText()).toContain('Switch to tiny-vision, which reads images');
    expect(await composer(page).getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await page.getByLabel('Message', { exact: true }).press('Enter');
    expect(await page.locator('article[data-role="user"]').count()).toBe(0);
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('What colour is this?');
    expect(await pending(page).count()).toBe(1);
    await pictures(page, 'refused');

    await page.getByRole('button', { name: 'Switch to tiny-vision' }).click();
    await expect.poll(() => page.locator('#model-picker').getAttribute('data-value')).toBe('companion:tiny-vision');
    expect(await refusal(page).count()).toBe(0);
    expect(await composer(page).getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
  });

  it('takes pasted and dropped images too; each shows, opens full size and can be removed from the keyboard', async () => {
    const { page } = app;
    await paste(page, smallPng, 'pasted.png');
    await drop(page, smallPng, 'dropped.png');
    await expect.poll(() => pending(page).count()).toBe(3);
    expect(await loadedWidths(page, '[aria-label="Images to send"] button img', 3)).toEqual([32, 32, 32]);

    const remove = page.getByRole('button', { name: 'Remove image 2 (pasted.png)' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => pending(page).count()).toBe(2);
    expect(
      await page.getByRole('button', { name: /^Remove image/ }).evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label'))),
    ).toEqual(['Remove image 1 (small.png)', 'Remove image 2 (dropped.png)']);

    await page.getByRole('button', { name: 'Open image 1 (small.png)' }).click();
    const viewer = page.getByRole('dialog', { name: 'image 1 (small.png)' });
    await viewer.waitFor();
    expect(await loadedWidths(page, 'dialog[open] img', 1)).toEqual([32]);
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'hidden' });
    await pictures(page, 'composer');
  });

  it('scales a large picture down to 2,048 px on its longest side, and says so', async () => {
    const { page } = app;
    await attachByButton(page, files.large);
    await expect.poll(() => pending(page).count()).toBe(3);
    expect(await page.locator('#composer-note').innerText()).toBe(
      'Images are kept within 2,048 px on their longest side: large.png (3,000 × 1,200) was scaled down to 2,048 × 819.',
    );
    expect((await loadedWidths(page, '[aria-label="Images to send"] button img', 3))[2]).toBe(2048);
    await page.getByRole('button', { name: 'Remove image 3 (large.png)' }).click();
    await expect.poll(() => pending(page).count()).toBe(2);
    expect(await page.locator('#composer-note').count()).toBe(0);
  });
});

describe('sending images', () => {
  it('sends them as image_url parts with the text, and the vision model answers', async () => {
    const { page } = app;
    await setSetting(page, 'Max tokens', '8');
    const requested = page.waitForRequest((request) => request.url().endsWith('/v1/chat/completions') && request.method() === 'POST');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const body = (await requested).postDataJSON() as { model: string; messages: { role: string; content: unknown }[] };
    const smallUrl = `data:image/png;base64,${smallPng.toString('base64')}`;
    expect(body.model).toBe('tiny-vision');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: smallUrl } },
          { type: 'image_url', image_url: { url: smallUrl } },
          { type: 'text', text: 'What colour is this?' },
        ],
      },
    ]);
    const question = page.locator('article[data-role="user"]').last();
    expect(await loadedWidths(page, 'article[data-role="user"] [aria-label="Images sent"] button img', 2)).toEqual([32, 32]);

    if (onEngine) {
      expect((await replyEnds(page, 'done', 120_000)).length).toBeGreaterThan(0);
      // The prompt held the two images: the tiny projector makes each 4 tokens.
      expect(await lastReply(page).getByTestId('stats').innerText()).toMatch(/^8 tokens · \d+ prompt/);
      expect(await pending(page).count()).toBe(0);
      expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    } else {
      // In process the companion refuses the images with the reason; the message and its images come back to the composer.
      // (replyEnds waits for text, and this reply has none.)
      await lastReply(page).and(page.locator('[data-status="error"]')).waitFor();
      expect(await page.getByRole('alert').filter({ hasText: 'only on the llama-server engine' }).count()).toBe(1);
      await expect.poll(() => pending(page).count()).toBe(2);
      expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('What colour is this?');
    }
    expect(await question.getByRole('button', { name: /^Open image/ }).count()).toBe(2);
    await pictures(page, 'sent');
  });

  it('keeps them in the transcript after a reload and offline, stored beside the conversation', async () => {
    const { page, context } = app;
    const stored = await storedConversations(page);
    const images = stored[0]!.messages[0]!.images;
    expect(images?.map(({ width, height, name }) => ({ width, height, name }))).toEqual([
      { width: 32, height: 20, name: 'small.png' },
      { width: 32, height: 20, name: 'dropped.png' },
    ]);
    const media = await storedMedia(page);
    expect(media.map((record) => record.id).sort()).toEqual(images!.map((image) => image.id).sort());
    expect(media.every((record) => record.type === 'image/png')).toBe(true);

    await waitForServiceWorker(page);
    await page.reload();
    expect(await loadedWidths(page, 'article[data-role="user"] [aria-label="Images sent"] button img', 2)).toEqual([32, 32]);
    await context.setOffline(true);
    try {
      await page.reload();
      expect(await loadedWidths(page, 'article[data-role="user"] [aria-label="Images sent"] button img', 2)).toEqual([32, 32]);
      await page.getByRole('button', { name: 'Open image 2 (dropped.png)' }).click();
      expect(await loadedWidths(page, 'dialog[open] img', 1)).toEqual([32]);
      await pictures(page, 'viewer');
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
    } finally {
      await context.setOffline(false);
    }
  });
});
