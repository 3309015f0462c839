/**
 * The disk limit for saved conversations on the Server screen, in real Chromium against a real
 * `hearth serve`: it shows the limit in force, refuses what is not a whole number of MB, saves a new
 * one to the configuration (models.slot_cache_mb) and says it applies now, or, with a model loaded,
 * that the model keeps the old limit until it loads again; the summary above follows. Screenshots.
 */
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { ConfigDocument } from '#shared/api/config.js';
import { send } from '../helpers/server.js';
import { screenshot, sharedBrowserApp, SCHEMES, SIZES } from './harness.js';

const app = sharedBrowserApp();

/** The limit in force, as the companion's configuration has it. */
async function savedLimit(): Promise<number> {
  const response = await send(app.server, '/admin/config/export?format=json');
  expect(response.status).toBe(200);
  return ((await response.json()) as ConfigDocument).models.slot_cache_mb;
}

async function setLimit(megabytes: number): Promise<void> {
  const response = await send(app.server, '/admin/config/apply', { body: { document: { version: 1, models: { slot_cache_mb: megabytes } } } });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The Server screen, signed in, with the saved conversations panel read. */
async function openPanel(
  viewport: { width: number; height: number },
  colorScheme: 'light' | 'dark',
): Promise<{ page: Page; errors: string[]; panel: Locator }> {
  const { page, errors } = await app.open('/server', { viewport, colorScheme, isMobile: viewport.width < 500, signIn: true });
  const panel = page.getByTestId('saved-conversations');
  await panel.getByTestId('saved-limit').waitFor();
  return { page, errors, panel };
}

describe('the disk limit for saved conversations', () => {
  it('refuses what is not a number of MB, and saves a new limit that applies at once when no model is loaded', async () => {
    await setLimit(2048);
    const { page, errors, panel } = await openPanel(SIZES[0]![1], 'light');
    const input = panel.getByRole('textbox', { name: "Disk for each model's saved conversations (MB)" });
    const save = panel.getByRole('button', { name: 'Save', exact: true });
    expect(await input.inputValue()).toBe('2048');
    expect(await save.isDisabled()).toBe(true);

    await input.fill('-5');
    await panel.getByRole('alert').filter({ hasText: 'Give a number from 0 to 1,048,576 MB.' }).waitFor();
    expect(await save.isDisabled()).toBe(true);
    await input.fill('lots');
    await panel.getByRole('alert').filter({ hasText: 'Give a whole number of MB (0 keeps none).' }).waitFor();
    expect(await savedLimit()).toBe(2048);

    await input.fill('100');
    await save.click();
    await panel.getByTestId('saved-limit-notice').filter({ hasText: 'Saved. It applies now.' }).waitFor();
    expect(await savedLimit()).toBe(100);
    await expect.poll(() => panel.getByTestId('saved-summary').innerText()).toMatch(/Each model keeps up to 104\.9 MB/);
    expect(await input.inputValue()).toBe('100');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('says that a loaded model keeps the old limit until it loads again', async () => {
    await setLimit(2048);
    const load = await send(app.server, '/admin/models/tiny/load', { method: 'POST' });
    expect(load.status, await load.clone().text()).toBe(200);
    const { page, errors, panel } = await openPanel(SIZES[0]![1], 'light');
    const input = panel.getByRole('textbox', { name: "Disk for each model's saved conversations (MB)" });
    await input.fill('0');
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await panel
      .getByTestId('saved-limit-notice')
      .filter({ hasText: 'Saved. tiny keeps the old limit until it is loaded again; models loaded from now on use the new one.' })
      .waitFor();
    expect(await savedLimit()).toBe(0);
    await expect.poll(() => panel.getByTestId('saved-summary').innerText()).toMatch(/^Nothing is kept/);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  describe.each(SIZES.map(([name, viewport]) => ({ name, viewport })))('at $name width', ({ name, viewport }) => {
    it.each(SCHEMES)('looks right (%s)', async (colorScheme) => {
      await setLimit(2048);
      const { page, errors, panel } = await openPanel(viewport, colorScheme);
      await panel.getByRole('textbox', { name: "Disk for each model's saved conversations (MB)" }).fill('512');
      await panel.getByRole('button', { name: 'Save', exact: true }).click();
      await panel.getByTestId('saved-limit-notice').waitFor();
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, `server-saved-limit-${name}-${colorScheme}`);
      expect(errors).toEqual([]);
      await page.context().close();
    });
  });
});
