/**
 * Restart now, in real Chromium against a real `hearth serve`: on the Devices screen the secure
 * channel is turned on, the screen says it opens only after a restart (and why the pairing code
 * button is greyed out), Restart now shows "Restarting…" and the same page, never reloaded,
 * reconnects by itself and shows the channel listening; then it is turned off the same way. The
 * Server screen's waiting change (the Ollama listener) offers Restart now too. Screenshots light
 * and dark, phone and desktop.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/remote.js';
import { newDataDir, startServer } from '../helpers/server.js';
import { DESKTOP, screenshot, sharedBrowserApp, SCHEMES, SIZES } from './harness.js';

/** A fresh `hearth serve` loads the whole companion again: on a busy machine that takes a while. */
const BACK_MS = 150_000;

let channelPort: number;
beforeAll(async () => {
  channelPort = await freePort();
});

const app = sharedBrowserApp({
  server: async () => {
    const dataDir = await newDataDir(false);
    writeFileSync(join(dataDir, 'config.yaml'), `version: 1\nserver:\n  remote: { enabled: false, host: 127.0.0.1, port: ${channelPort} }\n`);
    return startServer({ dataDir, withModel: false });
  },
});

const channelState = (page: Page) => page.getByTestId('channel-state');

async function openDevices(viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light') {
  const opened = await app.open('/devices', { viewport, colorScheme, signIn: true });
  await channelState(opened.page).filter({ hasNotText: 'Reading' }).waitFor();
  return opened;
}

/** Clicks Restart now and waits, on the same page, until the restarted companion's state is shown. */
async function restartFrom(page: Page, shown: RegExp, shot?: string): Promise<void> {
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  await page.getByTestId('restart-now').first().click();
  await page.getByTestId('restarting').waitFor();
  if (shot) await screenshot(page, shot);
  await channelState(page).filter({ hasText: shown }).waitFor({ timeout: BACK_MS });
  await page.getByTestId('restarting').waitFor({ state: 'detached' });
  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
}

describe('Restart now', () => {
  it('turns the secure channel on and off from the Devices screen, the page reconnecting by itself each time', { timeout: 420_000 }, async () => {
    const { page, errors } = await openDevices();
    await expect(channelState(page).textContent()).resolves.toMatch(/Off: other machines cannot reach/);
    const pair = page.getByRole('button', { name: 'Show a pairing code' });
    await expect(pair.isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('pair-blocked').textContent()).resolves.toMatch(/secure channel, which is off: turn it on above/);

    await page.getByRole('button', { name: 'Turn on the secure channel' }).click();
    await expect(page.getByRole('group', { name: 'Turn on the secure channel?' }).textContent()).resolves.toContain(
      `It listens on this machine only (127.0.0.1), port ${channelPort}`,
    );
    await page.getByRole('button', { name: 'Turn it on' }).click();
    await channelState(page)
      .filter({ hasText: `Turned on: it opens on this machine only (127.0.0.1), port ${channelPort} when Hearth restarts.` })
      .waitFor();
    await expect(page.getByTestId('pair-blocked').textContent()).resolves.toMatch(/opens when Hearth restarts/);
    for (const [name, size] of SIZES)
      for (const colorScheme of SCHEMES) {
        const shot = await openDevices(size, colorScheme);
        await shot.page.getByTestId('restart-now').first().waitFor();
        await screenshot(shot.page, `restart-devices-waiting-${name}-${colorScheme}`, { fullPage: true });
        await shot.context.close();
      }

    await restartFrom(page, /^\s*On: listening on this machine only/, 'restart-restarting-desktop-light');
    await expect(channelState(page).textContent()).resolves.toContain(`port ${channelPort}`);
    await expect(pair.isEnabled()).resolves.toBe(true);
    await expect(page.getByTestId('pair-blocked').count()).resolves.toBe(0);
    await screenshot(page, 'restart-devices-on-desktop-light');

    await page.getByTestId('channel-off').click();
    await channelState(page).filter({ hasText: 'Turned off, but it still listens' }).waitFor();
    await restartFrom(page, /^\s*Off: other machines cannot reach/);
    await page.getByRole('button', { name: 'Turn on the secure channel' }).waitFor();
    // While the companion is away, the browser reports the requests it could not make; nothing else may fail.
    expect(errors.filter((error) => !/Failed to load resource|ERR_CONNECTION_REFUSED/.test(error))).toEqual([]);
  });

  it("offers Restart now beside the Server screen's waiting change, and says why Save is greyed out", { timeout: 180_000 }, async () => {
    for (const [name, size] of SIZES)
      for (const colorScheme of SCHEMES) {
        const { page, context, errors } = await app.open('/server', { viewport: size, colorScheme, signIn: true });
        // The form says so once it has read the settings in force (the page asks for them on load).
        await page.getByTestId('access-settings').getByText('Nothing to save: these are the settings in force.').waitFor();
        const listener = page.getByTestId('ollama-listener');
        await listener.check();
        const state = page.getByTestId('ollama-listener-state');
        await state.filter({ hasText: 'Turned on' }).waitFor();
        await state.getByTestId('restart-now').waitFor();
        await state.scrollIntoViewIfNeeded();
        await screenshot(page, `restart-server-waiting-${name}-${colorScheme}`);
        // Left as it was: the restart test above must not open Ollama's port.
        await listener.uncheck();
        await state.filter({ hasText: 'Off.' }).waitFor();
        await expect(state.getByTestId('restart-now').count()).resolves.toBe(0);
        expect(errors).toEqual([]);
        await context.close();
      }
  });
});
