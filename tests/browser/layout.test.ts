/**
 * Accessibility and layout: keyboard use, every control named (from Chromium's own
 * accessibility tree), no sideways scrolling on a phone, light and dark.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubFixture, type HubFixture } from '../fixtures/hub/server.js';
import { startServerWithSlowModel } from './slow-model.js';
import { chooseModel, replyEnds, replyStarts, send, setSetting } from './app-helpers.js';
import { DESKTOP, PHONE, SCHEMES, screenshot, sharedBrowserApp } from './harness.js';

let hub: HubFixture;
beforeAll(async () => {
  hub = await startHubFixture([
    {
      id: 'hearth-test/Tiny-Chat-GGUF',
      downloads: 5200,
      likes: 31,
      files: { 'tiny-chat-Q4_K_M.gguf': Buffer.alloc(600_000, 1), 'tiny-chat-Q8_0.gguf': Buffer.alloc(1_200_000, 2) },
    },
    { id: 'someone/Qwen2.5-0.5B-Instruct-GGUF', downloads: 912_000, likes: 1430, files: { 'qwen2.5-0.5b-instruct-q4_k_m.gguf': Buffer.alloc(1000, 3) } },
  ]);
});
afterAll(() => hub?.close());

const app = sharedBrowserApp({ server: () => startServerWithSlowModel({ HF_ENDPOINT: hub.url }), prepare: ({ url }) => seedMemory(url) });

/** Something to show on the Memory screen. */
async function seedMemory(url: string): Promise<void> {
  const call = (path: string, body: unknown, method = 'POST') =>
    fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await call('/memory/ingest', {
    agent_id: 'helper',
    conversation_id: 'morning',
    session_date: '2026-11-01',
    skip_extraction: true,
    turns: [{ user: 'I cycle to work on my red bicycle.', assistant: 'A good way to start the day.' }],
  });
  await call('/memory/agents/helper/facts', { text: 'Drinks green tea, never coffee' });
  await call('/memory/agents/helper/facts', { text: 'Has a sister called Ana who lives in Lisbon' });
  await call('/memory/agents/helper/identity/name', { value: 'Sam' }, 'PUT');
}

const INTERACTIVE = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'checkbox',
  'radio',
  'slider',
  'spinbutton',
  'switch',
  'tab',
  'menuitem',
  'ListBox',
  'listbox',
]);

/** Interactive nodes of the accessibility tree that have no name. */
async function unnamedControls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
    nodes: { ignored: boolean; role?: { value: string }; name?: { value: string }; properties?: { name: string; value: { value: unknown } }[] }[];
  };
  await cdp.detach();
  return nodes
    .filter((node) => !node.ignored && INTERACTIVE.has(String(node.role?.value)))
    .filter((node) => !String(node.name?.value ?? '').trim())
    .map((node) => `${node.role?.value} ${JSON.stringify(node)}`.slice(0, 600));
}

async function noSidewaysScroll(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}

describe('first paint', () => {
  it('serves each screen as an HTML shell that shows the layout before any JavaScript runs', async () => {
    const context = await app.browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    for (const [path, heading] of [
      ['/models', 'Models'],
      ['/memory', 'Memory'],
      ['/images', 'Images'],
      ['/devices', 'Devices'],
      ['/server', 'Server'],
    ] as const) {
      await page.goto(`${app.server.url}${path}`);
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts()).toEqual([
        'Chat',
        'Models',
        'Memory',
        'Images',
        'Agents',
        'Devices',
        'Server',
      ]);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(heading);
    }
    await page.goto(app.server.url);
    expect(await page.getByRole('button', { name: 'Conversations' }).isVisible()).toBe(true);
    expect(await page.getByLabel('Message', { exact: true }).isVisible()).toBe(true);
    await screenshot(page, 'first-paint-phone');
    await context.close();
  });
});

describe('keyboard', () => {
  it('reaches the composer with Tab, sends with Enter and stops with Escape', async () => {
    const { context, page, errors } = await app.open();
    await chooseModel(page, 'companion:slow');
    await setSetting(page, 'Max tokens', '1800');
    await page.reload();
    await page.locator('#model-picker').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let steps = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== 'composer-text') {
      await page.keyboard.press('Tab');
      if (++steps > 40) throw new Error('the composer cannot be reached with Tab');
    }
    await page.keyboard.type('Typed with the keyboard');
    await page.keyboard.press('Enter');
    await replyStarts(page);
    await page.keyboard.press('Escape');
    await replyEnds(page, 'stopped');
    // Focus stays in the composer, ready for the next message.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('composer-text');
    expect(errors).toEqual([]);
    await context.close();
  });
});

// Both widths, as their controls differ (the desktop keeps the conversations beside the chat); dark only when taking pictures.
describe.each([
  { name: 'phone', viewport: PHONE },
  { name: 'desktop', viewport: DESKTOP },
])('at $name width', ({ name, viewport }) => {
  it.each(SCHEMES)('every screen names its controls and fits (%s)', async (colorScheme) => {
    const { context, page, errors } = await app.open('/', { viewport, colorScheme, isMobile: name === 'phone', hasTouch: name === 'phone', signIn: true });
    await chooseModel(page, 'companion:tiny');
    await setSetting(page, 'Max tokens', '40');
    await page.getByRole('button', { name: 'Settings' }).click();
    await send(page, 'Show me a list:\n- and some `code`');
    await replyEnds(page, 'done');
    expect(await unnamedControls(page)).toEqual([]);
    await noSidewaysScroll(page);
    await screenshot(page, `chat-${name}-${colorScheme}`);

    if (name === 'phone') {
      await page.getByRole('button', { name: 'Conversations' }).click();
      await page.getByLabel('Search conversations').waitFor();
      expect(await unnamedControls(page)).toEqual([]);
      await screenshot(page, `conversations-${name}-${colorScheme}`);
      await page.getByRole('button', { name: 'Back to the conversation' }).click();
    }

    // The picker's popover, open.
    await page.locator('#model-picker').click();
    await page.getByRole('combobox', { name: 'Search models' }).waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    await noSidewaysScroll(page);
    await screenshot(page, `picker-${name}-${colorScheme}`);
    await page.keyboard.press('Escape');

    // Each screen, once what it shows has arrived (the status stream keeps the network busy).
    const screens: { link: string; path: string; ready: string }[] = [
      { link: 'Models', path: 'models', ready: '#companion-heading ~ .cards li' },
      { link: 'Memory', path: 'memory', ready: '[aria-label="Facts"] .record' },
      { link: 'Server', path: 'server', ready: 'li.card[aria-label$="(loaded)"]' },
    ];
    for (const screen of screens) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: screen.link }).click();
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.locator(screen.ready).first().waitFor();
      expect(await unnamedControls(page)).toEqual([]);
      await noSidewaysScroll(page);
      await screenshot(page, `${screen.path}-${name}-${colorScheme}`);
    }

    // Discover, with a repository's files open.
    await page.goto(`${app.server.url}/models#discover`);
    const repo = page.getByRole('listitem', { name: 'hearth-test/Tiny-Chat-GGUF' });
    await repo.getByRole('button', { name: 'Show files' }).click();
    await repo.locator('.file').first().waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    await noSidewaysScroll(page);
    await screenshot(page, `discover-${name}-${colorScheme}`);
    expect(errors).toEqual([]);
    await context.close();
  });
});
