/** Steps the browser tests share: driving the chat the way a person does. */
import type { Page } from 'playwright-core';

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
