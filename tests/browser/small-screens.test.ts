/**
 * Things that were cut off: the Memory screen's tabs and the main navigation on a 375 px phone, and the last reply's
 * action row, which stayed under the composer when it appeared after the reply had ended.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { chooseModel, lastReply, replyEnds, send, setSetting } from './app-helpers.js';
import { DESKTOP, SCHEMES, launch, screenshot, watch } from './harness.js';

/** The narrowest phone the app is made for. */
const SMALL_PHONE = { width: 375, height: 667 };
const VIEWPORTS = [
  ['phone', SMALL_PHONE],
  ['desktop', DESKTOP],
] as const;

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  const ingest = await fetch(`${server.url}/memory/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      agent_id: 'helper',
      conversation_id: 'walk',
      skip_extraction: true,
      turns: [{ user: 'I walk to work along the river.', assistant: 'A fine way to start the day.' }],
    }),
  });
  expect(ingest.status).toBe(200);
  const pinned = await fetch(`${server.url}/memory/agents/helper/facts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'Walks to work along the river' }),
  });
  expect(pinned.ok).toBe(true);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Where an element is on the page: its top and bottom edges, its left and right. */
async function edges(page: Page, selector: string): Promise<{ top: number; bottom: number; left: number; right: number }> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const box = element.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom, left: box.left, right: box.right };
    });
}

describe('the Memory screen on a phone', () => {
  it('shows all four tabs whole, with their counts', async () => {
    for (const colorScheme of SCHEMES) {
      const context = await browser.newContext({ viewport: SMALL_PHONE, colorScheme });
      const page = await context.newPage();
      const errors = watch(page);
      await page.goto(`${server.url}/memory`);
      const tabs = page.getByRole('tab');
      await expect.poll(() => tabs.count()).toBe(4);
      const list = await edges(page, '[role="tablist"]');
      for (const name of ['Facts', 'Identity', 'Episodes', 'Transcript']) {
        const tab = page.getByRole('tab', { name: new RegExp(`^${name}`) });
        const box = await tab.evaluate((element) => {
          const rect = element.getBoundingClientRect();
          return { left: rect.left, right: rect.right, clipped: element.scrollWidth > element.clientWidth };
        });
        expect(box.left, name).toBeGreaterThanOrEqual(list.left - 0.5);
        expect(box.right, name).toBeLessThanOrEqual(Math.min(list.right, SMALL_PHONE.width) + 0.5);
        expect(box.clipped, name).toBe(false);
      }
      // Nothing is left to scroll to.
      expect(await page.locator('[role="tablist"]').evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
      await screenshot(page, `memory-tabs-phone-${colorScheme}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

describe('the main navigation on a phone', () => {
  it('keeps every screen on one line at 375 px', async () => {
    const context = await browser.newContext({ viewport: SMALL_PHONE });
    const page = await context.newPage();
    await page.goto(`${server.url}/memory`);
    const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
    await expect.poll(() => links.count()).toBe(7);
    const boxes = await links.evaluateAll((elements) =>
      elements.map((element) => element.getBoundingClientRect()).map((box) => ({ top: box.top, right: box.right })),
    );
    // One row: every link starts at the first one's height, and the last one ends on the screen.
    expect(new Set(boxes.map((box) => Math.round(box.top))).size).toBe(1);
    expect(boxes.at(-1)!.right).toBeLessThanOrEqual(SMALL_PHONE.width);
    await screenshot(page, 'navigation-phone-375');
    await context.close();
  });
});

describe('the chat', () => {
  it("keeps the last reply's action row in view, above the composer, once the reply ends", async () => {
    for (const [name, viewport] of VIEWPORTS) {
      for (const colorScheme of SCHEMES) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        const errors = watch(page);
        await page.goto(server.url);
        await chooseModel(page, 'companion:tiny');
        await setSetting(page, 'Max tokens', '160');
        // Closed again: on a small phone the open settings leave the messages little room.
        await page.getByRole('button', { name: 'Settings' }).click();
        // Enough to scroll: the list follows the reply as it is written.
        for (const text of ['Tell me about rivers.', 'And about the sea?']) {
          await send(page, text);
          await replyEnds(page);
        }
        const actions = lastReply(page).locator('.actions');
        await actions.waitFor();
        await expect
          .poll(async () => {
            const row = await actions.evaluate((element) => element.getBoundingClientRect().bottom);
            const list = await edges(page, 'section.messages');
            const composer = await edges(page, 'form.composer');
            return row <= list.bottom && row <= composer.top;
          })
          .toBe(true);
        await screenshot(page, `chat-last-actions-${name}-${colorScheme}`);
        expect(errors).toEqual([]);
        await context.close();
      }
    }
  });
});
