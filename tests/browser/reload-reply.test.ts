/**
 * A reply survives a reload, in real Chromium against a real `hearth serve` with a slow model: the
 * app stores the partial reply as it streams; reloading mid-reply shows what had arrived, marked
 * Interrupted, with Continue, which asks again and keeps the cut-off part as an earlier version.
 */
import { describe, expect, it } from 'vitest';
import { chooseModel, lastReply, replyEnds, replyStarts, send, setSetting, storedConversations } from './app-helpers.js';
import { sharedBrowserApp } from './harness.js';
import { startServerWithSlowModel } from './slow-model.js';

const app = sharedBrowserApp({ server: startServerWithSlowModel, page: {} });

/** The text of the last reply as this browser has stored it (IndexedDB), and its status. */
const stored = async () => {
  const last = (await storedConversations(app.page))[0]?.messages.at(-1);
  return last ? { content: last.content, status: last.status } : null;
};

describe('a reply cut off by a reload', () => {
  it('is kept as it streams, shown as interrupted after the reload, and continued', async () => {
    await chooseModel(app.page, 'companion:slow');
    await setSetting(app.page, 'Max tokens', '1800');
    await send(app.page, 'Tell me a long story.');
    await replyStarts(app.page);
    // Stored while it streams: some of the text is in this browser before the page goes.
    await expect.poll(async () => (await stored())?.content.length ?? 0, { timeout: 30_000 }).toBeGreaterThan(0);
    expect((await stored())?.status).toBe('streaming');

    await app.page.reload();
    const kept = await replyEnds(app.page, 'interrupted');
    expect(kept.length).toBeGreaterThan(0);
    await lastReply(app.page).locator('.badge.interrupted').filter({ hasText: 'Interrupted' }).waitFor();
    const problem = app.page.getByRole('alert').filter({ hasText: 'This reply was cut off when the page was reloaded or closed' });
    await problem.waitFor();
    expect((await stored())?.status).toBe('interrupted');

    await setSetting(app.page, 'Max tokens', '8');
    await problem.getByRole('button', { name: 'Continue' }).click();
    const again = await replyEnds(app.page, 'done');
    expect(again.length).toBeGreaterThan(0);
    // The cut-off reply is an earlier version of this one.
    await lastReply(app.page).getByText('2 / 2').waitFor();
    expect(app.errors).toEqual([]);
  });
});
