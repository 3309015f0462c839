/**
 * The Devices screen in real Chromium against a real host with the secure channel open: pick the
 * agents to grant, show a pairing code with the host's fingerprint, pair a second real companion
 * with what the screen shows, see it listed, revoke it from the screen; cloud workspaces with a
 * sign-in button. Screenshots light and dark, phone and desktop.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRemote, startHost } from '../helpers/remote.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { DESKTOP, screenshot, sharedBrowserApp, SIZES, SCHEMES } from './harness.js';

/** A second companion, to pair with the one whose Devices screen the app shows. */
let device: RunningServer;
beforeAll(async () => {
  device = await startServer({ withModel: false });
});
afterAll(() => device?.stop());

/** The host: the companion whose Devices screen the app shows. */
const app = sharedBrowserApp({
  server: () =>
    startHost({
      config: {
        agents: [{ id: 'helper' }, { id: 'writer' }],
        cloud_workspaces: [
          {
            name: 'acme',
            workspace_id: 'acme',
            issuer: 'https://login.example.org',
            client_id: 'hearth',
            agent_cards: ['https://agents.example.org/card.json'],
          },
        ],
      },
    }),
});

async function openDevices(viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await app.open('/devices', { viewport, colorScheme, signIn: true });
  await page.getByTestId('channel-state').filter({ hasText: 'listening on' }).waitFor();
  return { page, errors };
}

describe('the Devices screen', () => {
  it('shows the channel, makes a pairing code that pairs a real device, lists it and revokes it', async () => {
    const { page, errors } = await openDevices();
    await expect(page.getByTestId('channel-fingerprint').textContent()).resolves.toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    await page.getByRole('checkbox', { name: 'helper' }).check();
    await page.getByRole('button', { name: 'Show a pairing code' }).click();
    const code = (await page.getByLabel('Pairing code').textContent())!;
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    await expect(page.getByTestId('pairing').textContent()).resolves.toMatch(/Grants: helper/);
    await screenshot(page, 'devices-pairing-desktop-light');

    // The command on screen is what the other machine runs.
    const command = (await page.getByLabel('Pairing command', { exact: true }).textContent())!;
    const [, url, shownCode, fingerprint] = /^npm run hearth -- remote add NAME (\S+) --code (\S+) --fingerprint (\S+)$/.exec(command)!;
    expect(shownCode).toBe(code);
    const added = await addRemote(device, 'host', { url: url!, code: shownCode!, fingerprint: fingerprint! });
    expect(added.code, added.stderr).toBe(0);

    // The screen notices the device that used its code, and takes the code away.
    await page.getByTestId('paired').filter({ hasText: 'paired with this host (agents: helper)' }).waitFor();
    await expect(page.getByLabel('Pairing code').count()).resolves.toBe(0);
    const card = page.getByTestId('device-list').getByRole('listitem');
    await card.filter({ hasText: 'agents: helper' }).waitFor();
    await screenshot(page, 'devices-paired-desktop-light');

    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: /^Revoke / }).click();
    await card.getByText('revoked').waitFor();
    const listed = (await (await fetch(`${app.server.url}/admin/devices`)).json()) as { data: { revoked_at: string | null }[] };
    expect(listed.data[0]!.revoked_at).not.toBeNull();
    expect(errors).toEqual([]);
  });

  it('lists cloud workspaces with a sign-in button', async () => {
    const { page, errors } = await openDevices();
    const workspace = page.getByRole('listitem', { name: 'acme' });
    await workspace.getByText('not signed in').waitFor();
    await expect(workspace.getByRole('button', { name: 'Sign in to acme' }).isEnabled()).resolves.toBe(true);
    expect(errors).toEqual([]);
  });

  for (const [name, viewport] of SIZES) {
    for (const scheme of SCHEMES) {
      it(`fits a ${name} in ${scheme} mode`, async () => {
        const { page } = await openDevices(viewport, scheme);
        await page.getByRole('button', { name: /Show a (new|pairing) code/ }).click();
        await page.getByLabel('Pairing code').waitFor();
        const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
        expect(scroll).toBeLessThanOrEqual(width);
        // The seven screens of the main navigation sit on one line, every one in sight.
        const boxes = await Promise.all((await page.getByRole('navigation', { name: 'Main' }).getByRole('link').all()).map((link) => link.boundingBox()));
        expect(boxes).toHaveLength(7);
        expect(new Set(boxes.map((box) => Math.round(box!.y))).size).toBe(1);
        for (const box of boxes) expect(box!.x + box!.width).toBeLessThanOrEqual(width);
        await screenshot(page, `devices-${name}-${scheme}`, { fullPage: true });
      });
    }
  }
});
