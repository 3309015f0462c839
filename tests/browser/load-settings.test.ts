/**
 * A model's load settings and the Server screen on the llama-server engine, with a generated
 * draft pair (the target is the draft plus blocks whose output projections are zero) and a model
 * of another vocabulary:
 * - the context field starts at what the model loads with (the default 4,096 capped at the 2,048
 *   it was trained on), takes no more than that, and the card shows a saved 1,024 at once;
 * - the draft choice offers the compatible, smaller model as the suggestion and the other one
 *   disabled with the reason; choosing it saves the model's draft, and the Server screen shows its
 *   counters after a reply;
 * - the saved conversations on the Server screen, and Clear, which asks first.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEstimate } from '#shared/api/admin.js';
import { draftPairDataDir, send, startServer, type RunningServer } from '../helpers/server.js';
import { newSignInLink } from './app-helpers.js';
import { DESKTOP, SCHEMES, SIZES, launch, open, screenshot } from './harness.js';

let server: RunningServer;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  const dataDir = await draftPairDataDir();
  [server, browser] = await Promise.all([startServer({ dataDir, env: { HEARTH_ENGINE: 'server' } }), launch()]);
  ({ page, errors } = await open(browser, `${server.url}/models`, { signInLink: await newSignInLink(server) }));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const card = (id: string) => page.getByRole('listitem', { name: id, exact: true });
const settingsOf = (id: string) => page.getByRole('form', { name: `Load settings of ${id}` });
const contextField = (form: Locator) => form.getByRole('spinbutton', { name: 'Context length', exact: true });

/** Opens a model's load settings on the Models screen (when they are not open already). */
async function openSettings(id: string): Promise<Locator> {
  if (!page.url().endsWith('/models')) await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
  const form = settingsOf(id);
  if ((await form.count()) === 0)
    await card(id)
      .getByRole('button', { name: `Load settings of ${id}` })
      .click();
  await contextField(form).waitFor();
  return form;
}

async function chat(model: string, text: string): Promise<void> {
  const response = await send(server, '/v1/chat/completions', {
    body: { model, messages: [{ role: 'user', content: text }], max_tokens: 24, temperature: 0, seed: 7 },
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The model's own entry in models.overrides, as the companion has it. */
async function savedEntry(id: string): Promise<unknown> {
  const response = await send(server, `/admin/models/${id}/estimate`, { body: {} });
  return ((await response.json()) as ModelEstimate).saved;
}

/** Every colour scheme at every size, of what the page shows now (with `show` scrolled into view). */
async function screenshots(name: string, show?: Locator): Promise<void> {
  for (const [size, viewport] of SIZES)
    for (const scheme of SCHEMES) {
      await page.setViewportSize(viewport);
      await show?.scrollIntoViewIfNeeded();
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `${name}-${size}-${scheme}`);
    }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('the context length in load settings', () => {
  it('starts at what the model loads with, takes no more than it was trained on, and the card shows what was saved', async () => {
    await card('target').waitFor();
    // The default (4,096) on a model trained on 2,048 tokens: it loads with 2,048.
    expect(await card('target').locator('.facts').innerText()).toMatch(/2,048 context/);
    const form = await openSettings('target');
    const field = contextField(form);
    expect(await field.inputValue()).toBe('2048');
    expect(await field.getAttribute('max')).toBe('2048');
    const save = form.getByRole('button', { name: 'Save', exact: true });
    expect(await save.isDisabled()).toBe(true);

    await field.fill('999999');
    const note = form.locator(`[id="${await field.getAttribute('aria-describedby')}"]`);
    await expect.poll(() => note.innerText()).toMatch(/^Use 256 to 2,048 tokens: this model was trained on 2,048/);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await save.isDisabled()).toBe(true);
    await screenshots('load-settings-context-bound', field);

    await field.fill('1024');
    await expect.poll(() => save.isDisabled()).toBe(false);
    await save.click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect.poll(() => card('target').locator('.facts').innerText()).toMatch(/1,024 context/);
    expect(await field.inputValue()).toBe('1024');
    expect(await savedEntry('target')).toEqual({ context_size: 1024 });
  });
});

describe('the draft model choice', () => {
  it('suggests the smaller model of the same vocabulary, shows the other disabled with the reason, and saves the choice', async () => {
    const form = await openSettings('target');
    const choice = form.getByTestId('draft-choice');
    await expect.poll(() => choice.locator('option').count()).toBe(3);
    const options = await choice.locator('option').evaluateAll((elements) =>
      elements.map((element) => ({
        value: (element as HTMLOptionElement).value,
        text: element.textContent?.trim(),
        disabled: (element as HTMLOptionElement).disabled,
      })),
    );
    expect(options[0]).toEqual({ value: 'none', text: 'None', disabled: false });
    expect(options[1]).toMatchObject({ value: 'draft', disabled: false });
    expect(options[1]!.text).toMatch(/^draft \([\d.]+ [KM]B\) — suggested$/);
    expect(options[2]).toMatchObject({ value: 'thinking', disabled: true });
    expect(options[2]!.text).toMatch(/^thinking — cannot be used: its (vocabulary has \d+ tokens|token \d+ differs|special token)/);
    expect(await form.getByText('A smaller model that guesses ahead').count()).toBe(1);

    await choice.selectOption('draft');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await savedEntry('target')).toEqual({ draft: 'draft', context_size: 1024 });
    await screenshots('load-settings-draft', choice);
  });

  it("shows the draft's counters on the Server screen once the model has replied", async () => {
    await chat('target', 'Tell me about the water and the hills and the rivers that run to the sea');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Server' }).click();
    const running = page.getByRole('listitem', { name: 'target (loaded)' });
    await running.waitFor();
    const draft = running.getByTestId('model-draft');
    await expect.poll(() => draft.innerText()).toMatch(/^Draft model draft: [\d,]+ tokens guessed, [\d,]+ accepted \(\d+%\)\./);
    const status = (await (await send(server, '/admin/status')).json()) as { loaded: { id: string; draft?: { tokens: number } }[] };
    expect(status.loaded.find((model) => model.id === 'target')?.draft?.tokens).toBeGreaterThan(0);
    await screenshots('server-draft', draft);
  });
});

describe('saved conversations on the Server screen', () => {
  it('shows how many there are and the disk they take, and Clear deletes them after asking', async () => {
    // A conversation longer than the shortest one worth saving, then the model unloaded: it saves it.
    await chat('target', Array.from({ length: 12 }, (_, index) => `Line ${index} of a long question about rivers and hills.`).join(' '));
    const unloaded = await send(server, '/admin/models/target/unload', { method: 'POST' });
    expect(unloaded.status).toBe(200);
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    const panel = page.getByTestId('saved-conversations');
    const summary = panel.getByTestId('saved-summary');
    await expect.poll(() => summary.innerText()).toMatch(/^[1-9]\d* conversations? saved, [\d.]+ [KMG]?B on disk\. Each model keeps up to 2\.1 GB/);
    expect(await panel.getByRole('progressbar', { name: 'Disk used by the saved conversations of target' }).count()).toBe(1);
    await screenshots('server-saved-conversations', panel);

    await panel.getByRole('button', { name: 'Clear', exact: true }).click();
    const question = panel.getByRole('group', { name: 'Clear the saved conversations?' });
    await question.waitFor();
    // Nothing is deleted until the question is answered.
    expect(((await (await send(server, '/admin/engine/conversations')).json()) as { files: number }).files).toBeGreaterThan(0);
    await screenshots('server-saved-conversations-confirm', question);
    await question.getByRole('button', { name: 'Delete them' }).click();
    await panel
      .getByRole('status')
      .filter({ hasText: /^Cleared: [\d.]+ [KMG]?B freed\.$/ })
      .waitFor();
    await expect.poll(() => summary.innerText()).toMatch(/^None saved now\./);
    expect(((await (await send(server, '/admin/engine/conversations')).json()) as { files: number }).files).toBe(0);
    expect(await panel.getByRole('button', { name: 'Clear', exact: true }).isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });
});
