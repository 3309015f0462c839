/**
 * Model and server settings in real Chromium against a real `hearth serve` with the tiny model:
 * Load from a model card, a context length changed in the model's load settings (with the memory
 * estimate following it) saved and the model loaded again, seen in GET /admin/status and in
 * config.yaml; and letting other machines connect, which the companion refuses without required
 * keys and a key to use, and applies only after the risk was confirmed. Screenshots light and
 * dark, phone and desktop.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ServerStatus } from '#shared/api/admin.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { DESKTOP, screenshot, sharedBrowserApp, SIZES, SCHEMES } from './harness.js';

const app = sharedBrowserApp();

const openSignedIn = (path: string, viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light') => app.open(path, { viewport, colorScheme, signIn: true });

const config = () => parse(readFileSync(join(app.server.dataDir, 'config.yaml'), 'utf8')) as Partial<ConfigDocument>;
const status = async () => (await (await fetch(`${app.server.url}/admin/status`)).json()) as ServerStatus;

async function resetAccess(): Promise<void> {
  const response = await fetch(`${app.server.url}/admin/config/apply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      document: { version: 1, server: { host: '127.0.0.1', auth: { required: false }, cors: { origins: [] } } },
      confirm_high_risk: true,
    }),
  });
  expect(response.status, await response.text()).toBe(200);
}

/** Opens the load settings of tiny on the Models screen. */
async function openTinySettings(page: Page): Promise<void> {
  const card = page.getByRole('listitem', { name: 'tiny' });
  await card.getByRole('button', { name: 'Load settings of tiny' }).click();
  await card.getByTestId('load-estimate').waitFor();
}

describe('model settings on the Models screen', () => {
  it('loads a model from its card, and a context length saved there reloads it with that context (status and config.yaml)', async () => {
    const { page, errors } = await openSignedIn('/models');
    const card = page.getByRole('listitem', { name: 'tiny' });
    await card.getByRole('button', { name: 'Load tiny' }).click();
    await card.getByRole('button', { name: 'Unload tiny' }).waitFor();
    expect((await status()).loaded.find((model) => model.id === 'tiny')?.context_size).toBe(2048);

    await openTinySettings(page);
    const estimate = card.getByTestId('load-estimate');
    await expect(estimate.textContent()).resolves.toMatch(/× 2,048 tokens of context/);
    const before = (await estimate.textContent())!;
    const context = card.getByLabel('Context length', { exact: true });
    await context.fill('1024');
    // The estimate follows the form: the companion's figure for 1,024 tokens.
    await card.getByTestId('load-estimate').filter({ hasText: '× 1,024 tokens of context' }).waitFor();
    expect(await estimate.textContent()).not.toBe(before);

    await card.getByRole('button', { name: 'Save and reload' }).click();
    await card.getByText('Saved, and tiny was loaded again with these settings.').waitFor();
    expect((await status()).loaded.find((model) => model.id === 'tiny')?.context_size).toBe(1024);
    expect(config().models?.overrides).toEqual({ tiny: { context_size: 1024 } });

    // Back to the defaults: the model's own entry leaves config.yaml and it loads with 2,048 again.
    await card.getByRole('button', { name: 'Use the defaults' }).click();
    await card.getByTestId('load-estimate').filter({ hasText: '× 2,048 tokens of context' }).waitFor();
    await card.getByRole('button', { name: 'Save and reload' }).click();
    await card.getByText('Saved, and tiny was loaded again with these settings.').waitFor();
    expect((await status()).loaded.find((model) => model.id === 'tiny')?.context_size).toBe(2048);
    expect(config().models?.overrides ?? {}).toEqual({});
    expect(errors).toEqual([]);
  });

  it('says what is wrong with a value in words and does not save it', async () => {
    const { page, errors } = await openSignedIn('/models');
    await openTinySettings(page);
    const card = page.getByRole('listitem', { name: 'tiny' });
    await card.getByLabel('Context length', { exact: true }).fill('100');
    // The range in words, up to what the model was trained on.
    await card.getByText(/^Use 256 to [\d,]+ tokens: this model was trained on /).waitFor();
    await expect(card.locator('button[type="submit"]').isDisabled()).resolves.toBe(true);
    await card.getByLabel('Processor threads').selectOption('fixed');
    await card.getByText('Enter how many threads to use.').waitFor();
    expect(errors).toEqual([]);
  });

  it('offers Load and the settings only signed in', async () => {
    const context = await app.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${app.server.url}/models`);
    const card = page.getByRole('listitem', { name: 'tiny' });
    await card.waitFor();
    await page.getByTestId('sign-in-notice').filter({ hasText: 'Sign in to load and unload models and change how they load.' }).waitFor();
    await expect(card.getByRole('button', { name: /^(Load|Unload) tiny$/ }).count()).resolves.toBe(0);
    await expect(card.getByRole('button', { name: 'Load settings of tiny' }).count()).resolves.toBe(0);
  });
});

describe('who can connect, on the Server screen', () => {
  it('asks before letting other machines in, and the companion refuses it without required keys and a key', async () => {
    await resetAccess();
    const { page, errors } = await openSignedIn('/server');
    const form = page.getByTestId('access-settings');
    await form.waitFor();
    await form.getByRole('radio', { name: /Other machines too/ }).check();
    // Choosing the network ticks the key requirement; without it the companion refuses.
    await expect(form.getByRole('checkbox', { name: 'Require an access key' }).isChecked()).resolves.toBe(true);
    await form.getByRole('checkbox', { name: 'Require an access key' }).uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText(/Other machines can be let in only when an access key is required/).waitFor();
    expect(config().server?.host ?? '127.0.0.1').toBe('127.0.0.1');

    // Keys required, but none exists yet: the app says why not and offers to make one first.
    await form.getByRole('checkbox', { name: 'Require an access key' }).check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form
      .getByRole('group', { name: 'Require an access key?' })
      .getByText(/^No access key exists yet\./)
      .waitFor();
    await screenshot(page, 'settings-server-refused-desktop-light');
    expect(config().server?.host ?? '127.0.0.1').toBe('127.0.0.1');
    await form.getByRole('button', { name: 'Cancel' }).click();

    // With a key, the risk is shown in words and nothing happens until it is confirmed.
    const created = await fetch(`${app.server.url}/admin/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"label":"phone"}' });
    expect(created.status).toBe(201);
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('button', { name: 'Require keys without one here' }).click();
    const confirm = form.getByRole('group', { name: 'Apply this change?' });
    await confirm.getByText(/Other machines on your networks could reach Hearth at this computer's addresses, port \d+\./).waitFor();
    expect(config().server?.host ?? '127.0.0.1').toBe('127.0.0.1');
    await confirm.getByRole('button', { name: 'Apply the change' }).click();
    await form.getByText(/^Saved\. The new address takes effect when Hearth starts again/).waitFor();
    expect(config().server).toMatchObject({ host: '0.0.0.0', auth: { required: true } });
    // Still on loopback until it starts again.
    expect((await status()).address?.host).toBe('127.0.0.1');
    const text = (await form.textContent()) ?? '';
    expect(text).not.toMatch(/server\.|auth\.required|cors|listen_beyond_loopback|confirmation_required|config_invalid|\/admin/);
    // The refusal is the companion's 400, which the browser logs; nothing else went wrong.
    expect(errors.filter((error) => !/status of 400 \(Bad Request\)/.test(error))).toEqual([]);
    expect(errors).toHaveLength(1);
    await resetAccess();
  });

  it('adds an allowed web page after checking it, and saves it', async () => {
    await resetAccess();
    const { page, errors } = await openSignedIn('/server');
    const form = page.getByTestId('access-settings');
    await form.getByLabel('Web page address').fill('http://localhost:5173/chat');
    await form.getByRole('button', { name: 'Add' }).click();
    await form.getByText(/^Write only the scheme, the host and the port/).waitFor();
    await form.getByLabel('Web page address').fill('http://localhost:5173');
    await form.getByRole('button', { name: 'Add' }).click();
    await form.getByRole('button', { name: 'Remove http://localhost:5173' }).waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Web pages from http://localhost:5173 could call Hearth from a browser.').waitFor();
    await form.getByRole('button', { name: 'Apply the change' }).click();
    await form.getByText('Saved. It applies now.').waitFor();
    expect(config().server?.cors?.origins).toEqual(['http://localhost:5173']);
    expect(errors).toEqual([]);
    await resetAccess();
  });
});

describe('screenshots', () => {
  beforeAll(async () => {
    // A key to use, so letting other machines in comes to its confirmation.
    const created = await fetch(`${app.server.url}/admin/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"label":"screens"}',
    });
    expect(created.status).toBe(201);
  });

  for (const [name, viewport] of SIZES) {
    for (const scheme of SCHEMES) {
      it(`the model settings and the server settings fit a ${name} in ${scheme} mode`, async () => {
        const { page } = await openSignedIn('/models', viewport, scheme);
        await openTinySettings(page);
        const card = page.getByRole('listitem', { name: 'tiny' });
        await card.getByLabel('GPU offload').selectOption('layers');
        await card.getByLabel('Number of layers on the GPU').fill('2');
        await card.getByLabel('Requests at once').selectOption('fixed');
        await card.getByLabel('Number of requests at once').fill('2');
        await card.getByTestId('load-estimate').filter({ hasText: '2 × ' }).waitFor();
        const fits = async () => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
        let { scroll, width } = await fits();
        expect(scroll).toBeLessThanOrEqual(width);
        await card.evaluate((element) => element.scrollIntoView());
        await screenshot(page, `settings-model-${name}-${scheme}`);
        await card.getByTestId('load-estimate').evaluate((element) => element.scrollIntoView({ block: 'center' }));
        await screenshot(page, `settings-model-estimate-${name}-${scheme}`);

        await resetAccess();
        await page.goto(`${app.server.url}/server`);
        const form = page.getByTestId('access-settings');
        await form.getByRole('radio', { name: /Other machines too/ }).check();
        await form.getByLabel('Web page address').fill('http://localhost:5173');
        await form.getByRole('button', { name: 'Add' }).click();
        await form.getByRole('button', { name: 'Save' }).click();
        await form.getByRole('group', { name: 'Require an access key?' }).waitFor();
        await page.locator('#access-heading').evaluate((heading) => heading.scrollIntoView());
        await screenshot(page, `settings-server-require-keys-${name}-${scheme}`);
        await form.getByRole('button', { name: 'Require keys without one here' }).click();
        await form.getByRole('group', { name: 'Apply this change?' }).waitFor();
        ({ scroll, width } = await fits());
        expect(scroll).toBeLessThanOrEqual(width);
        await page.locator('#access-heading').evaluate((heading) => heading.scrollIntoView());
        await screenshot(page, `settings-server-${name}-${scheme}`);
        await form.getByRole('group', { name: 'Apply this change?' }).evaluate((group) => group.scrollIntoView({ block: 'end' }));
        await screenshot(page, `settings-server-confirm-${name}-${scheme}`);
      });
    }
  }
});
