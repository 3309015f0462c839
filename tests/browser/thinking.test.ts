/**
 * A reasoning model's thought in the chat, in real Chromium against a real `hearth serve` with the
 * slow test model in its thinking shape: the thought streams into an open Thinking disclosure,
 * which folds to "Thought for N s" when the answer starts and is still there after a reload (a
 * thought cut off by a reload too); the conversation's Thinking switch off sends reasoning_effort
 * none, and no thought comes. The random weights never close a thought by themselves: a reply
 * limit (max tokens) makes the app ask for reasoning effort medium, half of it for the thought.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { chooseModel, lastReply, replyEnds, send, setSetting, storedConversations } from './app-helpers.js';
import { sharedBrowserApp } from './harness.js';

/** `hearth serve` with `thinker`: the slow test model (~150 tokens/s) whose chat format opens a thought. */
async function startThinkingServer(): Promise<RunningServer> {
  const dataDir = await newDataDir(false);
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  await writeTinyModel(join(dataDir, 'models', 'thinker.gguf'), { size: 'small', seed: 1, thinking: true });
  return startServer({ dataDir });
}

const app = sharedBrowserApp({ server: startThinkingServer, page: {} });

const thought = () => lastReply(app.page).getByTestId('thought');
const toggle = () => thought().getByRole('button');

/** The last reply's thought as this browser has stored it (IndexedDB). */
const storedThought = async () => (await storedConversations(app.page))[0]?.messages.at(-1)?.reasoning ?? '';

/** Waits until the last reply's thought streams, shown open. */
async function thoughtStreams(): Promise<void> {
  await app.page.waitForFunction(
    () => {
      const replies = document.querySelectorAll('article[data-role="assistant"]');
      const box = replies[replies.length - 1]?.querySelector('[data-testid="thought"][data-state="thinking"]');
      const text = box?.querySelector<HTMLElement>('[role="region"]');
      return !!text && !text.hidden && (text.textContent ?? '').length > 0;
    },
    undefined,
    { timeout: 120_000 },
  );
}

describe('a reasoning model in the chat', () => {
  it('streams its thought open, folds it when the answer starts, and keeps it across a reload', async () => {
    await chooseModel(app.page, 'companion:thinker');
    const thinking = app.page.getByRole('switch', { name: 'Thinking' });
    expect(await thinking.isChecked()).toBe(true);
    await setSetting(app.page, 'Max tokens', '300');
    await send(app.page, 'Is 97 prime?');
    await thoughtStreams();
    expect(await toggle().getAttribute('aria-expanded')).toBe('true');
    expect(await toggle().innerText()).toContain('Thinking…');

    // The answer starts: the thought folds by itself and says how long it took.
    await app.page.waitForFunction(
      () => {
        const replies = document.querySelectorAll('article[data-role="assistant"]');
        return (replies[replies.length - 1]?.querySelector('.markdown')?.textContent ?? '').length > 0;
      },
      undefined,
      { timeout: 120_000 },
    );
    await expect.poll(() => toggle().getAttribute('aria-expanded')).toBe('false');
    await replyEnds(app.page, 'done', 120_000);
    expect(await toggle().innerText()).toMatch(/Thought for (under 1|\d+) s/);
    const kept = await storedThought();
    expect(kept.length).toBeGreaterThan(0);

    await app.page.reload();
    await replyEnds(app.page, 'done');
    expect(await toggle().innerText()).toMatch(/Thought for (under 1|\d+) s/);
    await toggle().click();
    expect(await toggle().getAttribute('aria-expanded')).toBe('true');
    expect(await thought().getByRole('region', { name: 'Thought' }).textContent()).toBe(kept);
  });

  it('keeps a thought cut off by a reload', async () => {
    await setSetting(app.page, 'Max tokens', '4000');
    await send(app.page, 'Think it through.');
    await thoughtStreams();
    await expect.poll(async () => (await storedThought()).length, { timeout: 30_000 }).toBeGreaterThan(0);

    await app.page.reload();
    const ended = await app.page.waitForFunction(() => {
      const replies = document.querySelectorAll('article[data-role="assistant"]');
      const status = replies[replies.length - 1]?.getAttribute('data-status');
      return status && status !== 'streaming' ? status : null;
    });
    expect(await ended.jsonValue()).toBe('interrupted');
    expect(await toggle().innerText()).toContain('Thought (cut off)');
    await toggle().click();
    expect((await thought().getByRole('region', { name: 'Thought' }).textContent())?.length).toBeGreaterThan(0);
  });

  it('asks for no thought with the Thinking switch off', async () => {
    await setSetting(app.page, 'Max tokens', '16');
    await app.page.getByRole('switch', { name: 'Thinking' }).uncheck();
    const request = app.page.waitForRequest((candidate) => candidate.url().endsWith('/v1/chat/completions'));
    await send(app.page, 'Just answer.');
    expect((await request).postDataJSON()).toMatchObject({ reasoning_effort: 'none', max_tokens: 16 });
    const answer = await replyEnds(app.page, 'done');
    expect(answer.length).toBeGreaterThan(0);
    expect(await thought().count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
