/**
 * The companion's data folder deleted while it runs: the open app says so in a notice of its own
 * (not the "not answering" one), and takes it away again once the same folder is back.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempFolder } from '../helpers/temp.js';
import { open, screenshot, SCHEMES, SIZES } from './harness.js';
import { startInProcessApp, type InProcessApp } from './in-process.js';

let companion: InProcessApp;
beforeAll(async () => {
  companion = await startInProcessApp({ withModel: false });
});
afterAll(() => companion?.close());

describe('the data folder deleted or moved while the companion runs', () => {
  it('shows a notice saying nothing can be saved and what to do; it goes once the folder is back', async () => {
    const { page } = await open(companion.browser, companion.url);
    const notice = page.getByTestId('data-folder-gone');
    await page.getByRole('link', { name: 'Hearth' }).waitFor();
    await expect.poll(() => page.getAttribute('.status', 'data-status')).toBe('connected');
    expect(await notice.count()).toBe(0);

    const aside = join(tempFolder('aside'), 'moved');
    renameSync(companion.services.paths.root, aside);
    await companion.services.dataFolder.check();
    expect(companion.services.dataFolder.gone).toBe(true);

    // The app asks again on its own, no reload: every 10 s (the server store's unit test follows
    // that timer) and whenever the browser comes back online. The event, rather than the timer.
    await page.evaluate(() => window.dispatchEvent(new Event('online')));
    await notice.waitFor({ timeout: 30_000 });
    expect(await notice.innerText()).toMatch(/data folder was deleted or moved while Hearth was running.*Put the folder back.*restart Hearth/s);
    // The companion still answers: not the "not answering" notice.
    expect(await page.getByTestId('unreachable').count()).toBe(0);
    expect(await page.getAttribute('.status', 'data-status')).toBe('connected');
    // The top bar does not say all is well: it says the companion cannot save.
    expect(await page.getAttribute('.status', 'aria-label')).toMatch(/^Companion can't save/);

    for (const [size, viewport] of SIZES) {
      for (const scheme of SCHEMES) {
        const shot = await open(companion.browser, companion.url, { viewport, colorScheme: scheme });
        await shot.page.getByTestId('data-folder-gone').waitFor({ timeout: 30_000 });
        await screenshot(shot.page, `data-folder-gone-${size}-${scheme}`);
        await shot.context.close();
      }
    }

    renameSync(aside, companion.services.paths.root);
    await companion.services.dataFolder.check();
    expect(companion.services.dataFolder.gone).toBe(false);
    await page.evaluate(() => window.dispatchEvent(new Event('online')));
    await notice.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await page.getAttribute('.status', 'aria-label')).toMatch(/^Companion connected/);
  });
});
