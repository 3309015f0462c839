/**
 * Access keys managed in the app, in real Chromium against a real `hearth serve`: turning on
 * "Require an access key" with no key is refused in words and offers to make one; a key is created
 * with its scopes and an end, shown once with Copy, works, and is revoked after confirmation;
 * requiring keys with a key made for this browser in the same step keeps the app's chat working.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AccessKeyRecord } from '#shared/api/access.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { sharedBrowserApp } from './harness.js';

/** The key the app created for the phone, read from the page the once it is shown. */
let phoneKey: string;

const app = sharedBrowserApp({ page: { path: '/server', signIn: true } });
beforeAll(() => app.page.getByTestId('access-settings').waitFor());

const required = () => (parse(readFileSync(join(app.server.dataDir, 'config.yaml'), 'utf8')) as Partial<ConfigDocument>).server?.auth?.required ?? false;
const keys = async () => ((await (await fetch(`${app.server.url}/admin/keys`)).json()) as { data: AccessKeyRecord[] }).data;
const models = (key?: string) =>
  fetch(`${app.server.url}/v1/models`, { headers: key ? { authorization: `Bearer ${key}` } : {} }).then((response) => response.status);

describe('access keys in the app', () => {
  it('refuses to require a key while none exists, in words, and changes nothing', async () => {
    const form = app.page.getByTestId('access-settings');
    await form.getByRole('checkbox', { name: 'Require an access key' }).check();
    await form.getByRole('button', { name: 'Save' }).click();
    const ask = form.getByRole('group', { name: 'Require an access key?' });
    await ask.getByText(/^No access key exists yet\. Requiring one now would shut out every program that uses Hearth, this app's chat included/).waitFor();
    // Only ways that make a key first: no button requires keys as things are.
    await expect(ask.getByRole('button', { name: /^Require keys/ }).count()).resolves.toBe(0);
    await ask.getByRole('button', { name: 'Create keys first' }).click();
    await expect.poll(() => app.page.evaluate(() => document.activeElement?.id)).toBe('key-label');
    await expect(form.getByRole('group', { name: 'Require an access key?' }).count()).resolves.toBe(0);
    expect(required()).toBe(false);
  });

  it('creates a key with its scopes and an end, shows it once with Copy, and the key works', async () => {
    const panel = app.page.locator('#access-keys');
    await panel.getByLabel('Name').fill('Phone');
    await panel.getByRole('checkbox', { name: /^Images/ }).uncheck();
    await panel.getByLabel('Ends').selectOption({ label: 'After 7 days' });
    await panel.getByRole('button', { name: 'Create key' }).click();
    const created = panel.getByRole('group', { name: 'New access key' });
    await created.getByText('It will not be shown again.', { exact: false }).waitFor();
    phoneKey = (await created.getByTestId('created-key-value').innerText()).trim();
    expect(phoneKey).toMatch(/^hth_[A-Za-z0-9_-]{40,}$/);
    await created.getByRole('button', { name: 'Copy' }).click();
    await created.getByRole('button', { name: 'Copied' }).waitFor();

    const [record] = (await keys()).filter((key) => key.label === 'Phone');
    expect(record).toMatchObject({ agent: null, revoked_at: null });
    expect(record!.scopes.sort()).toEqual(['agents', 'inference', 'memory', 'tools']);
    const days = (Date.parse(record!.expires_at!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    const card = panel.getByRole('listitem', { name: 'Phone' });
    await card.getByText('Chat and models, Agents, Tools, Memory', { exact: false }).waitFor();
    await card.getByText(/Last used never · ends /).waitFor();

    await created.getByRole('button', { name: 'Done' }).click();
    await expect(panel.getByTestId('created-key').count()).resolves.toBe(0);
    expect(await app.page.content()).not.toContain(phoneKey.slice(12));
  });

  it('requires keys with a key made for this browser in the same step: the app still gets in, a program without a key does not', async () => {
    const form = app.page.getByTestId('access-settings');
    await form.getByRole('button', { name: 'Save' }).click();
    const ask = form.getByRole('group', { name: 'Require an access key?' });
    await ask.getByText(/This browser has none saved, so its chat would stop working\./).waitFor();
    await ask.getByRole('button', { name: 'Create a key for this browser and require keys' }).click();
    await form.getByText('Saved. It applies now.').waitFor();
    expect(required()).toBe(true);
    const saved = await app.page.evaluate(() => localStorage.getItem('hearth.access-key'));
    expect(saved).toMatch(/^hth_/);
    expect((await keys()).map((key) => key.label)).toEqual(expect.arrayContaining([expect.stringMatching(/^This browser \(/), 'Phone']));
    expect(await models()).toBe(401);
    expect(await models(saved!)).toBe(200);
    expect(await models(phoneKey)).toBe(200);
    // The app's own requests carry the browser's key: the status stays connected.
    await app.page.getByTestId('key-prefix').waitFor();
    await app.page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect.poll(() => app.page.getAttribute('.status', 'data-status')).toBe('connected');
  });

  it('revokes a key after confirmation; the key stops working at once', async () => {
    const panel = app.page.locator('#access-keys');
    const card = panel.getByRole('listitem', { name: 'Phone' });
    // Dismissed: nothing happens.
    app.page.once('dialog', (dialog) => void dialog.dismiss());
    await card.getByRole('button', { name: 'Revoke Phone' }).click();
    await expect.poll(async () => (await keys()).find((key) => key.label === 'Phone')?.revoked_at ?? null).toBeNull();
    app.page.once('dialog', (dialog) => {
      expect(dialog.message()).toMatch(/^Revoke the key "Phone"\? Programs using it are refused from now on/);
      void dialog.accept();
    });
    await card.getByRole('button', { name: 'Revoke Phone' }).click();
    await card.locator('.tag').filter({ hasText: 'revoked' }).waitFor();
    await expect(card.getByRole('button', { name: 'Revoke Phone' }).count()).resolves.toBe(0);
    expect(await models(phoneKey)).toBe(401);
    expect(app.errors).toEqual([]);
  });
});
