/**
 * The screens look like one app, in real Chromium against a real `hearth serve` (the tiny chat
 * model, a tiny Stable Diffusion folder): Images as wide as the others, problem boxes flush with the
 * page, themed controls, one primary action per card and form, pictures shown whole with a
 * Download, each Images tab with its own result, agent editor defaults, a run's tokens and time,
 * and a phone composer that does not talk about Shift. Screenshots: light and dark, phone and desktop.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { parse } from 'yaml';
import { imageDataDir } from '../helpers/images.js';
import { tinyModelPath } from '../helpers/models.js';
import { startServer } from '../helpers/server.js';
import { DESKTOP, PHONE, screenshot, sharedBrowserApp, SIZES, SCHEMES } from './harness.js';

const workspace = mkdtempSync(join(tmpdir(), 'hearth-consistency-ws-'));

const app = sharedBrowserApp({
  async server() {
    const dataDir = imageDataDir({ 'tiny-sd': {} });
    copyFileSync(await tinyModelPath(), join(dataDir, 'models', 'tiny.gguf'));
    const agents = [{ id: 'helper', name: 'Helper', model: 'tiny', max_steps: 2, max_tokens: 24, memory: { enabled: false } }];
    writeFileSync(join(dataDir, 'config.yaml'), JSON.stringify({ version: 1, models: { threads: 1 }, agents }));
    return startServer({ dataDir, withModel: false });
  },
  page: { path: '/server', colorScheme: 'light', signIn: true },
});

const go = async (path: string) => {
  await app.page.goto(`${app.server.url}${path}`);
  await app.page.locator('h1').first().waitFor();
};

/** Whether an input shows its whole placeholder (the text measured in the input itself). */
const placeholderFits = (selector: string) =>
  app.page.locator(selector).evaluate((input: HTMLInputElement) => {
    const probe = input.cloneNode() as HTMLInputElement;
    probe.value = input.placeholder;
    input.after(probe);
    const fits = probe.scrollWidth <= probe.clientWidth;
    probe.remove();
    return fits;
  });

const background = (selector: string) => app.page.locator(selector).evaluate((element) => getComputedStyle(element).backgroundColor);

describe('the frame every screen shares', () => {
  it('gives Images the same width as the other screens', async () => {
    const frame = async (path: string) => {
      await go(path);
      return app.page.locator('.page').evaluate((element) => {
        const box = element.getBoundingClientRect();
        const heading = element.querySelector('h1')!.getBoundingClientRect();
        return { left: box.left, width: box.width, heading: heading.left };
      });
    };
    const memory = await frame('/memory');
    expect(await frame('/images')).toEqual(memory);
  });

  it('sets a problem box flush with the page content, not indented', async () => {
    await go('/memory');
    const offsets = await app.page.locator('.page').evaluate((element) => {
      const problem = document.createElement('p');
      problem.className = 'problem';
      problem.setAttribute('role', 'alert');
      problem.textContent = 'Something went wrong.';
      element.querySelector('h1')!.parentElement!.after(problem);
      const result = { problem: problem.getBoundingClientRect().left, heading: element.querySelector('h1')!.getBoundingClientRect().left };
      problem.remove();
      return result;
    });
    expect(offsets.problem).toBe(offsets.heading);
  });

  it('themes checkboxes, file pickers and the search field’s clear button', async () => {
    await app.page.goto(app.server.url);
    const search = app.page.getByLabel('Search conversations');
    await search.fill('x');
    // The clear button is drawn in the theme's muted colour: dark strokes at the field's right end, nothing blue.
    const { data, info } = await sharp(await search.screenshot())
      .raw()
      .toBuffer({ resolveWithObject: true });
    let strokes = 0;
    let blue = 0;
    for (let y = 0; y < info.height; y++) {
      for (let x = info.width - 36; x < info.width; x++) {
        const at = (y * info.width + x) * info.channels;
        const [red, green, bluePart] = [data[at]!, data[at + 1]!, data[at + 2]!];
        if (red + green + bluePart < 450) strokes++;
        if (bluePart > red + 40 && bluePart > green + 20) blue++;
      }
    }
    expect(strokes).toBeGreaterThan(4);
    expect(blue).toBe(0);
    await search.fill('');
    await go('/models');
    const accent = await app.page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim());
    const file = app.page.locator('input[type="file"]').first();
    await file.waitFor({ state: 'attached' });
    expect(await file.evaluate((input) => getComputedStyle(input, '::file-selector-button').borderRadius)).not.toBe('0px');
    await go('/agent');
    await app.page.getByRole('button', { name: 'New agent' }).click();
    await app.page.locator('details.more summary').click();
    const box = app.page.locator('form.editor input[type="checkbox"]').first();
    const rgb = await box.evaluate((input) => getComputedStyle(input).accentColor);
    expect(rgb).toBe(
      await app.page.evaluate((color) => {
        const probe = document.createElement('span');
        probe.style.color = color;
        document.body.append(probe);
        const value = getComputedStyle(probe).color;
        probe.remove();
        return value;
      }, accent),
    );
  });
});

describe('Models', () => {
  it('makes "Use in chat" the card’s main action and copying to the browser a secondary one', async () => {
    await go('/models');
    const card = app.page
      .getByRole('listitem')
      .filter({ has: app.page.getByRole('heading', { name: 'tiny' }) })
      .first();
    const use = card.getByRole('button', { name: 'Use in chat' });
    const copy = card.getByRole('button', { name: /Copy tiny to this browser/ });
    await copy.waitFor();
    expect(await use.getAttribute('class')).toContain('primary');
    expect((await copy.getAttribute('class')) ?? '').not.toContain('primary');
    await screenshot(app.page, 'models-use-in-chat-desktop-light');
  });
});

describe('Images', () => {
  it('shows a result whole with a Download, keeps it to its own tab, and keeps the size placeholder whole', async () => {
    await go('/images');
    await app.page.waitForFunction(() => (document.querySelector('#image-model') as HTMLSelectElement | null)?.value);
    expect(await placeholderFits('.size input')).toBe(true);
    await app.page.getByLabel('Prompt', { exact: true }).fill('a red house');
    await app.page.getByRole('button', { name: 'Generate', exact: true }).click();
    const result = app.page.getByTestId('image-result');
    await result.waitFor({ timeout: 120_000 });
    const download = app.page.getByRole('link', { name: 'Download' }).first();
    expect(await download.getAttribute('download')).toMatch(/^hearth-generate-.*\.png$/);
    expect(await download.getAttribute('href')).toMatch(/^data:image\/png;base64,/);

    await app.page.getByRole('tab', { name: 'Edit' }).click();
    await app.page.getByText('Results appear here').waitFor();
    expect(await result.count()).toBe(0);
    await app.page.getByRole('tab', { name: 'Generate' }).click();
    await result.waitFor();

    const tile = app.page.getByTestId('gallery-item').first().locator('img');
    await tile.waitFor();
    expect(await tile.evaluate((image) => getComputedStyle(image).objectFit)).toBe('contain');
    expect(
      await app.page
        .getByTestId('gallery-item')
        .first()
        .getByRole('link', { name: /^Download/ })
        .getAttribute('download'),
    ).toMatch(/\.png$/);
  });
});

describe('the agent editor and run view', () => {
  it('starts a new agent on the only model, shows placeholders whole, and saves max tokens', async () => {
    await go('/agent');
    await app.page.getByRole('button', { name: 'New agent' }).click();
    const editor = app.page.locator('form.editor');
    // Filled in as soon as the model list is there.
    await expect.poll(() => editor.getByLabel('Model', { exact: true }).inputValue()).toBe('tiny');
    await editor.locator('details.more summary').click();
    for (const id of [
      'agent-id',
      'agent-name',
      'agent-description',
      'agent-workspace-folder',
      'agent-memory-budget-tokens',
      'agent-temperature',
      'agent-max-tokens',
    ])
      expect(await placeholderFits(`#${id}`), id).toBe(true);
    await editor.getByLabel('Short name', { exact: true }).fill('scribe');
    await editor.getByLabel('Max tokens per reply').fill('64');
    await editor.getByLabel('Workspace folder', { exact: true }).fill(workspace);
    // Writing files in a folder is a change the companion asks to confirm.
    await editor
      .locator('li', { has: app.page.getByText('write_file', { exact: true }) })
      .getByRole('checkbox')
      .check();
    await editor.getByRole('radio', { name: 'write tools: Ask me' }).check();
    await screenshot(app.page, 'agents-editor-defaults-desktop-light');
    await editor.getByRole('button', { name: 'Save', exact: true }).click();
    const risks = editor.locator('.risks');
    await risks.waitFor();
    // One primary button: "Save anyway" while the risk waits, and Save is not another one.
    const accent = await background('.risks button');
    expect(await background('form.editor .actions button[type="submit"]')).not.toBe(accent);
    await editor.locator('.actions').scrollIntoViewIfNeeded();
    await screenshot(app.page, 'agents-editor-risk-desktop-light');
    await risks.getByRole('button', { name: 'Save anyway' }).click();
    await app.page.getByRole('heading', { name: 'scribe', level: 2 }).waitFor();
    const config = parse(readFileSync(join(app.server.dataDir, 'config.yaml'), 'utf8')) as { agents: { id: string; max_tokens?: number; model?: string }[] };
    expect(config.agents.find((agent) => agent.id === 'scribe')).toMatchObject({ model: 'tiny', max_tokens: 64 });
  });

  it('shows a run’s tokens and time, and centres the history’s status pill', async () => {
    await app.page
      .getByRole('navigation', { name: 'Agent list' })
      .getByRole('button', { name: /Helper/ })
      .click();
    await app.page.getByLabel('Task', { exact: true }).fill('Say something short.');
    await app.page.getByRole('button', { name: 'Run', exact: true }).click();
    await app.page.waitForFunction(
      () => ['completed', 'failed'].includes(document.querySelector('section.run')?.getAttribute('data-status') ?? ''),
      undefined,
      {
        timeout: 120_000,
      },
    );
    expect(await app.page.getByTestId('run-figures').innerText()).toMatch(/^[\d,]+ tokens \([\d,]+ prompt, [\d,]+ written\) · \d+ s$/);
    const pill = app.page.locator('#history-heading + ul .tag').first();
    await pill.waitFor();
    const offset = await pill.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(element);
      const text = range.getBoundingClientRect();
      return { x: text.left + text.width / 2 - (box.left + box.width / 2), y: text.top + text.height / 2 - (box.top + box.height / 2) };
    });
    expect(Math.abs(offset.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(offset.y)).toBeLessThanOrEqual(1.5);
    await screenshot(app.page, 'agents-run-figures-desktop-light');
  });
});

describe('the chat on a phone', () => {
  it('does not talk about Shift+Enter in the composer', async () => {
    const phone = await app.browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
    const view = await phone.newPage();
    await view.goto(app.server.url);
    // The hint is chosen once the page runs (a touch screen's pointer), so it is waited for.
    await expect.poll(() => view.getByLabel('Message', { exact: true }).getAttribute('placeholder')).toBe('Message Hearth');
    await phone.close();
    await app.page.setViewportSize(PHONE);
    await app.page.goto(app.server.url);
    await expect.poll(() => app.page.getByLabel('Message', { exact: true }).getAttribute('placeholder')).toBe('Message Hearth');
    await app.page.setViewportSize(DESKTOP);
  });
});

describe('screenshots', () => {
  it('of Images, Agents, Models and the chat, in light and dark, on a phone and a desktop', async () => {
    const screens: [string, string, () => Promise<void>][] = [
      ['images-page', '/images', () => app.page.getByTestId('gallery-item').first().locator('img').waitFor()],
      ['agents-page', '/agent', () => app.page.getByRole('heading', { name: 'Run history' }).waitFor()],
      ['models-cards', '/models', () => app.page.getByRole('button', { name: 'Use in chat' }).first().waitFor()],
      ['chat-empty', '/', () => app.page.getByLabel('Message', { exact: true }).waitFor()],
    ];
    for (const scheme of SCHEMES) {
      await app.page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of SIZES) {
        await app.page.setViewportSize(viewport);
        for (const [name, path, ready] of screens) {
          await app.page.goto(`${app.server.url}${path}`);
          await ready();
          const label = `${name}-${size}-${scheme}`;
          // Each picture shows the scheme it is named for, and the screen fits its width.
          await expect.poll(() => app.page.evaluate(() => document.documentElement.dataset.theme), { message: label }).toBe(scheme);
          const { scroll, width } = await app.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
          expect(scroll, label).toBeLessThanOrEqual(width);
          await screenshot(app.page, label, { fullPage: name === 'images-page' });
        }
      }
    }
    await app.page.setViewportSize(DESKTOP);
    await app.page.emulateMedia({ colorScheme: 'light' });
  });

  it('reports no page errors but the save the companion asked to confirm', () => {
    expect(app.errors.filter((error) => !/status of 409/.test(error))).toEqual([]);
  });
});
