/** Steps the browser tests share: driving the chat the way a person does. */
import type { Page } from 'playwright-core';
import type { SignInLink } from '#shared/api/admin.js';
import type { RunningServer } from '../helpers/server.js';

export const assistant = (page: Page) => page.locator('article[data-role="assistant"]');
export const lastReply = (page: Page) => assistant(page).last();

export async function chooseModel(page: Page, key: string): Promise<void> {
  await page.getByLabel('Model', { exact: true }).selectOption(key);
}

/** Opens the settings of the current conversation and sets a field. */
export async function setSetting(page: Page, label: 'Max tokens' | 'Temperature' | 'Top P' | 'System prompt', value: string): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Settings' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  const field = page.getByLabel(label);
  await field.fill(value);
  await field.press('Tab');
}

export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
}

/** Waits for the last reply to end in `status` and returns its text. */
export async function replyEnds(page: Page, status: 'done' | 'stopped' | 'interrupted' | 'error' = 'done', timeout = 60_000): Promise<string> {
  await page.waitForFunction(
    (wanted) => {
      const replies = document.querySelectorAll('article[data-role="assistant"]');
      return replies[replies.length - 1]?.getAttribute('data-status') === wanted;
    },
    status,
    { timeout },
  );
  return (await lastReply(page).locator('.markdown').innerText()).trim();
}

/** The companion's admin status, read from the test (loopback) side. */
export async function adminStatus(url: string): Promise<{ loaded: { id: string; busy: number; queued: number; generated_tokens: number }[] }> {
  const response = await fetch(`${url}/admin/status`);
  return (await response.json()) as { loaded: { id: string; busy: number; queued: number; generated_tokens: number }[] };
}

/** The one-time sign-in link `hearth serve` printed on stderr when it started. */
export function startupSignInLink(server: RunningServer): string {
  const link = /Sign the app in [^\n]*?(http:\/\/\S+\/sign-in#[A-Za-z0-9_-]+)/.exec(server.stderr())?.[1];
  if (!link) throw new Error(`hearth serve printed no sign-in link:\n${server.stderr()}`);
  return link;
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
