/**
 * A reply survives a reload, in real Chromium against a real `hearth serve` with a slow model: the
 * app stores the partial reply as it streams; reloading mid-reply shows what had arrived, marked
 * Interrupted, with Continue, which asks again and keeps the cut-off part as an earlier version.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { chooseModel, lastReply, replyEnds, replyStarts, send, setSetting } from './app-helpers.js';
import { launch, open } from './harness.js';
import { startServerWithSlowModel } from './slow-model.js';

let server: RunningServer;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  [server, browser] = await Promise.all([startServerWithSlowModel(), launch()]);
  ({ page, errors } = await open(browser, server.url));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The text of the last reply as this browser has stored it (IndexedDB), and its status. */
const stored = () =>
  page.evaluate(
    () =>
      new Promise<{ content: string; status: string } | null>((resolve, reject) => {
        const opening = indexedDB.open('hearth');
        opening.onerror = () => reject(opening.error);
        opening.onsuccess = () => {
          const read = opening.result.transaction('conversations').objectStore('conversations').getAll();
          read.onsuccess = () => {
            const last = (read.result as { messages: { content: string; status: string }[] }[])[0]?.messages.at(-1);
            opening.result.close();
            resolve(last ? { content: last.content, status: last.status } : null);
          };
        };
      }),
  );

describe('a reply cut off by a reload', () => {
  it('is kept as it streams, shown as interrupted after the reload, and continued', async () => {
    await chooseModel(page, 'companion:slow');
    await setSetting(page, 'Max tokens', '1800');
    await send(page, 'Tell me a long story.');
    await replyStarts(page);
    // Stored while it streams: some of the text is in this browser before the page goes.
    await expect.poll(async () => (await stored())?.content.length ?? 0, { timeout: 30_000 }).toBeGreaterThan(0);
    expect((await stored())?.status).toBe('streaming');

    await page.reload();
    const kept = await replyEnds(page, 'interrupted');
    expect(kept.length).toBeGreaterThan(0);
    await lastReply(page).locator('.badge.interrupted').filter({ hasText: 'Interrupted' }).waitFor();
    const problem = page.getByRole('alert').filter({ hasText: 'This reply was cut off when the page was reloaded or closed' });
    await problem.waitFor();
    expect((await stored())?.status).toBe('interrupted');

    await setSetting(page, 'Max tokens', '8');
    await problem.getByRole('button', { name: 'Continue' }).click();
    const again = await replyEnds(page, 'done');
    expect(again.length).toBeGreaterThan(0);
    // The cut-off reply is an earlier version of this one.
    await lastReply(page).getByText('2 / 2').waitFor();
    expect(errors).toEqual([]);
  });
});
