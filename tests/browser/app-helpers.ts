/** Steps the browser tests share: driving the chat the way a person does. */
import type { Page } from 'playwright-core';
import { untilTrue } from '../helpers/until.js';
import type { SignInLink } from '#shared/api/admin.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';

export const assistant = (page: Page) => page.locator('article[data-role="assistant"]');
export const lastReply = (page: Page) => assistant(page).last();

/**
 * Opens the model picker and chooses the model with this key (`companion:tiny`, `wllama:tiny.gguf`).
 * The picker is opened again until the option shows: a click that lands before the page is ready,
 * or before the companion's models are listed, leaves it closed or without the option.
 */
export async function chooseModel(page: Page, key: string): Promise<void> {
  const picker = page.locator('#model-picker');
  const option = page.locator(`[role="option"][data-key="${key}"]`);
  await untilTrue(
    async () => {
      if (await option.isVisible()) return true;
      if ((await picker.getAttribute('aria-expanded')) !== 'true') await picker.click();
      return option.isVisible();
    },
    `the model picker to offer ${key}`,
    60_000,
  );
  await option.click();
  await page.waitForFunction((wanted) => document.querySelector('#model-picker')?.getAttribute('data-value') === wanted, key);
}

/** The key of the model the picker shows. */
export async function chosenModel(page: Page): Promise<string | null> {
  return page.locator('#model-picker').getAttribute('data-value');
}

/** The picker's models by group, as [group label, keys]. */
export async function pickerGroups(page: Page): Promise<[string, string[]][]> {
  const picker = page.locator('#model-picker');
  if ((await picker.getAttribute('aria-expanded')) !== 'true') await picker.click();
  const groups = await page
    .locator('#model-picker-list [role="group"]')
    .evaluateAll((nodes) =>
      nodes.map((group) => [
        group.querySelector('.group-label')?.textContent?.trim() ?? '',
        [...group.querySelectorAll('[role="option"]')].map((option) => option.getAttribute('data-key') ?? ''),
      ]),
    );
  await page.keyboard.press('Escape');
  return groups as [string, string[]][];
}

/** Opens the settings of the current conversation and sets a field. */
export async function setSetting(page: Page, label: 'Max tokens' | 'Temperature' | 'Top P' | 'System prompt', value: string): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Settings' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  const field = page.getByLabel(label);
  await field.fill(value);
  await field.press('Tab');
}

/**
 * Sends a message and waits until its reply has been added, so that `replyEnds` never reads the
 * previous reply: the new one is the assistant message right after this user message.
 */
export async function send(page: Page, text: string): Promise<void> {
  const before = await page.locator('article[data-role="user"]').count();
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
  await page.waitForFunction((count) => {
    const articles = [...document.querySelectorAll('section.messages > article')];
    const users = articles.filter((article) => article.getAttribute('data-role') === 'user');
    return users.length > count && articles.at(-1)?.getAttribute('data-role') === 'assistant';
  }, before);
}

/**
 * Waits until the reply being written shows its first text. The first reply of a companion model
 * loads it (and measures its threads), and an in-browser engine starts slowly too: on a busy
 * machine that takes a while.
 */
export async function replyStarts(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const replies = document.querySelectorAll('article[data-role="assistant"][data-status="streaming"] .markdown');
      return (replies[replies.length - 1]?.textContent ?? '').length > 0;
    },
    undefined,
    { timeout: 120_000 },
  );
}

/**
 * Waits for the last reply to end in `status` and returns its text, read in the same step as the
 * status (a check and a later read could see two different replies).
 */
export async function replyEnds(page: Page, status: 'done' | 'stopped' | 'interrupted' | 'error' = 'done', timeout = 60_000): Promise<string> {
  const handle = await page.waitForFunction(
    (wanted) => {
      const replies = document.querySelectorAll('article[data-role="assistant"]');
      const last = replies[replies.length - 1];
      if (last?.getAttribute('data-status') !== wanted) return null;
      return (last.querySelector('.markdown') as HTMLElement | null)?.innerText ?? '';
    },
    status,
    { timeout },
  );
  return ((await handle.jsonValue()) as string).trim();
}

/** The companion's admin status, read from the test (loopback) side. */
export async function adminStatus(url: string): Promise<{ loaded: { id: string; busy: number; queued: number; generated_tokens: number }[] }> {
  const response = await fetch(`${url}/admin/status`);
  return (await response.json()) as { loaded: { id: string; busy: number; queued: number; generated_tokens: number }[] };
}

/** A fresh one-time sign-in link, as `hearth open` asks for it (the test fetch sends the admin credential). */
export async function newSignInLink(server: RunningServer): Promise<string> {
  const response = await fetch(`${server.url}/admin/session/links`, { method: 'POST' });
  if (!response.ok) throw new Error(`No sign-in link: ${response.status} ${await response.text()}`);
  return ((await response.json()) as SignInLink).url;
}

/** Signs this page's browser context in through a sign-in link, the way a person does; lands on the server page. */
export async function signIn(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.waitForURL((url) => url.pathname === '/server' && url.hash === '');
}

/** A conversation as this browser keeps it (IndexedDB `hearth`, store `conversations`): the fields the tests read. */
export interface StoredConversation {
  updatedAt: number;
  messages: {
    role: string;
    content: string;
    status?: string;
    reasoning?: string;
    images?: { id: string; type: string; width: number; height: number; name?: string }[];
  }[];
}

/** The records of one store of the app's IndexedDB database (`hearth`) in this page's browser, in the store's key order. */
function storedRecords<T>(page: Page, store: 'conversations' | 'media'): Promise<T[]> {
  return page.evaluate(
    (name) =>
      new Promise<T[]>((resolve, reject) => {
        const opening = indexedDB.open('hearth');
        opening.onerror = () => reject(opening.error);
        opening.onsuccess = () => {
          const read = opening.result.transaction(name).objectStore(name).getAll();
          read.onsuccess = () => {
            opening.result.close();
            resolve(read.result as T[]);
          };
        };
      }),
    store,
  );
}

/** The conversations this page's browser has stored, in the store's key order. */
export function storedConversations(page: Page): Promise<StoredConversation[]> {
  return storedRecords<StoredConversation>(page, 'conversations');
}

/** The images of conversations this page's browser has stored (store `media`), without their bytes. */
export async function storedMedia(page: Page): Promise<{ id: string; conversationId: string; type: string }[]> {
  const records = await storedRecords<{ id: string; conversationId: string; type: string }>(page, 'media');
  return records.map(({ id, conversationId, type }) => ({ id, conversationId, type }));
}

/**
 * A companion whose model library is the fake hub at `hubUrl()`: an empty models folder and a memory
 * budget of 100 MB (so a 40 MB file is "too big"). Downloads are the owner's business, so the page
 * signs in through a link first.
 */
export async function hubCompanion(hubUrl: () => string): Promise<RunningServer> {
  const dataDir = await newDataDir(false);
  writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  threads: 1\n  memory_budget_mb: 100\n');
  return startServer({ dataDir, env: { HF_ENDPOINT: hubUrl() } });
}
