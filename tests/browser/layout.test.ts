/**
 * Accessibility and layout: keyboard use, every control named (from Chromium's own
 * accessibility tree), no sideways scrolling on a phone, light and dark.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { startServerWithSlowModel } from './slow-model.js';
import { chooseModel, newSignInLink, replyEnds, send, setSetting, signIn } from './app-helpers.js';
import { DESKTOP, PHONE, launch, screenshot, watch } from './harness.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServerWithSlowModel();
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

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

describe('keyboard', () => {
  it('reaches the composer with Tab, sends with Enter and stops with Escape', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors = watch(page);
    await page.goto(server.url);
    await chooseModel(page, 'companion:slow');
    await setSetting(page, 'Max tokens', '1800');
    await page.reload();
    await page.getByLabel('Model', { exact: true }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let steps = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== 'composer-text') {
      await page.keyboard.press('Tab');
      if (++steps > 40) throw new Error('the composer cannot be reached with Tab');
    }
    await page.keyboard.type('Typed with the keyboard');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('article[data-role="assistant"][data-status="streaming"] .markdown')?.textContent);
    await page.keyboard.press('Escape');
    await replyEnds(page, 'stopped');
    // Focus stays in the composer, ready for the next message.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('composer-text');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe.each([
  { name: 'phone', viewport: PHONE },
  { name: 'desktop', viewport: DESKTOP },
])('at $name width', ({ name, viewport }) => {
  it.each(['light', 'dark'] as const)('every screen names its controls and fits (%s)', async (colorScheme) => {
    const context = await browser.newContext({ viewport, colorScheme, isMobile: name === 'phone', hasTouch: name === 'phone' });
    const page = await context.newPage();
    const errors = watch(page);
    await signIn(page, await newSignInLink(server));
    await page.goto(server.url);
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

    for (const path of ['models', 'server']) {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: path === 'models' ? 'Models' : 'Server' })
        .click();
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await unnamedControls(page)).toEqual([]);
      await noSidewaysScroll(page);
      await screenshot(page, `${path}-${name}-${colorScheme}`);
    }
    expect(errors).toEqual([]);
    await context.close();
  });
});
