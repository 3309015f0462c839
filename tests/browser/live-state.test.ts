/**
 * The app follows the companion without a reload, in real Chromium against a real `hearth serve`:
 * a model loaded or unloaded by another client shows its new state on the Models screen, and when
 * the companion stops the app says so and shows no model as loaded.
 */
import { describe, expect, it } from 'vitest';
import { sharedBrowserApp } from './harness.js';

const app = sharedBrowserApp({ page: { path: '/models', signIn: true } });

const tag = () => app.page.getByRole('listitem', { name: 'tiny' }).locator('.tag').first().innerText();
const admin = async (action: 'load' | 'unload') => {
  const response = await fetch(`${app.server.url}/admin/models/tiny/${action}`, { method: 'POST' });
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
    await app.server.stop();
    await expect.poll(() => app.page.getAttribute('.status', 'data-status'), { timeout: 15_000 }).toBe('unreachable');
    expect(await tag()).toBe('not loaded');
  });
});
