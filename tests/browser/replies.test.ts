/**
 * Replies people read comfortably: a hosted provider (the one boundary that cannot run here,
 * played by a server speaking OpenAI's wire format) answers with a table, a quote and code; the
 * app shows bordered tables, the quote, highlighted code with its language and a copy button.
 * The picker groups models by where they run and can be searched and driven by keyboard.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { newDataDir, startServer } from '../helpers/server.js';
import { chooseModel, chosenModel, pickerGroups, replyEnds, send } from './app-helpers.js';
import { DESKTOP, PHONE, screenshot, sharedBrowserApp } from './harness.js';

export const MARKDOWN_REPLY = [
  'Here is a comparison:',
  '',
  '| Model | Size | Speed |',
  '|---|---:|---|',
  '| tiny | 0.6 MB | fast |',
  '| small | 87 MB | slower |',
  '',
  '> Small models answer quickly but know less.',
  '',
  '```python',
  'def greet(name: str) -> str:',
  '    # Say hello',
  '    return f"Hello, {name}!"',
  '```',
  '',
  'And a plain block:',
  '',
  '```',
  'no language here',
  '```',
].join('\n');

let provider: MockProvider;
beforeAll(async () => {
  provider = await startMockProvider({ models: ['writer'], reply: MARKDOWN_REPLY });
});
afterAll(() => provider?.close());

const app = sharedBrowserApp({
  async server() {
    const dataDir = await newDataDir(true);
    writeFileSync(
      join(dataDir, 'config.yaml'),
      `version: 1\nmodels:\n  threads: 1\nproviders:\n  - name: hosted\n    base_url: ${provider.baseUrl}\n    models: [writer]\n`,
    );
    return startServer({ dataDir });
  },
  page: {},
});
beforeAll(() => app.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.server.url }));

describe('the model picker', () => {
  it('groups models by where they run, filters as you type, and works from the keyboard', async () => {
    await expect
      .poll(() => pickerGroups(app.page))
      .toEqual([
        ['This machine', ['companion:tiny']],
        ['Providers', ['companion:hosted/writer']],
      ]);
    const picker = app.page.locator('#model-picker');
    await picker.focus();
    await app.page.keyboard.press('Enter');
    const search = app.page.getByRole('combobox', { name: 'Search models' });
    await expect.poll(() => app.page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Search models');
    await search.fill('writ');
    expect(await app.page.locator('[role="option"]').evaluateAll((options) => options.map((option) => option.getAttribute('data-key')))).toEqual([
      'companion:hosted/writer',
    ]);
    await app.page.keyboard.press('Enter');
    await expect.poll(() => chosenModel(app.page)).toBe('companion:hosted/writer');
    // The popover closed and the focus is back on the picker.
    expect(await app.page.evaluate(() => document.activeElement?.id)).toBe('model-picker');
    await app.page.keyboard.press('Enter');
    await app.page.keyboard.press('ArrowDown');
    await app.page.keyboard.press('Escape');
    expect(await chosenModel(app.page)).toBe('companion:hosted/writer');
    expect(await picker.getAttribute('aria-expanded')).toBe('false');
  });
});

describe('a reply with Markdown', () => {
  it('shows a bordered table, a quote, and highlighted code with its language and a copy button', async () => {
    await chooseModel(app.page, 'companion:hosted/writer');
    await send(app.page, 'Compare the models and show code');
    await replyEnds(app.page);
    const reply = app.page.locator('article[data-role="assistant"]').last();

    const table = reply.locator('table');
    expect(await table.locator('thead th').allInnerTexts()).toEqual(['Model', 'Size', 'Speed']);
    expect(await table.locator('tbody tr').count()).toBe(2);
    const border = await table
      .locator('td')
      .first()
      .evaluate((cell) => getComputedStyle(cell).borderTopStyle);
    expect(border).toBe('solid');
    expect(await reply.locator('blockquote').innerText()).toBe('Small models answer quickly but know less.');

    const code = reply.locator('figure.code').first();
    expect(await code.locator('.language').innerText()).toBe('python');
    await expect.poll(() => code.locator('code .hljs-keyword').count()).toBeGreaterThan(0);
    expect(await code.locator('.hljs-comment').innerText()).toBe('# Say hello');
    expect(await code.locator('code').innerText()).toBe('def greet(name: str) -> str:\n    # Say hello\n    return f"Hello, {name}!"');
    const plain = reply.locator('figure.code').nth(1);
    expect(await plain.locator('.language').innerText()).toBe('text');
    expect(await plain.locator('span[class^="hljs"]').count()).toBe(0);

    await code.getByRole('button', { name: 'Copy python code' }).click();
    await expect.poll(() => code.getByRole('button', { name: 'Code copied' }).count()).toBe(1);
    expect(await app.page.evaluate(() => navigator.clipboard.readText())).toBe('def greet(name: str) -> str:\n    # Say hello\n    return f"Hello, {name}!"');
    await screenshot(app.page, 'reply-markdown-desktop-light');
    await app.page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(app.page, 'reply-markdown-desktop-dark');
    await app.page.setViewportSize(PHONE);
    await reply.locator('figure.code').first().scrollIntoViewIfNeeded();
    await screenshot(app.page, 'reply-markdown-phone-dark');
    await app.page.emulateMedia({ colorScheme: 'light' });
    await screenshot(app.page, 'reply-markdown-phone-light');
    await app.page.setViewportSize(DESKTOP);

    // The provider was asked without a length cap: the reply may use the model's context.
    expect(provider.requests.at(-1)?.body).not.toHaveProperty('max_tokens');
    expect(app.errors).toEqual([]);
  });
});
