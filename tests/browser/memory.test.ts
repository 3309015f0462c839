/**
 * The Memory screen over the companion's memory routes: agents with counts, facts pinned,
 * edited and forgotten (after a confirmation), identity entries likewise, the transcript searched, and a preview of what
 * would be recalled for a question within the token budget.
 */
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { screenshot, sharedBrowserApp } from './harness.js';

async function post(url: string, path: string, body: unknown, method = 'POST'): Promise<unknown> {
  const response = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Two agents' memories: a transcript, pinned facts and an identity entry for `helper`, a turn for `writer`. */
async function seed({ url }: RunningServer): Promise<void> {
  await post(url, '/memory/ingest', {
    agent_id: 'helper',
    conversation_id: 'trip',
    session_date: '2026-11-01',
    skip_extraction: true,
    turns: [
      { user: 'I cycle to work on my red bicycle every morning.', assistant: 'That sounds like a good start to the day.' },
      { user: 'My sister Ana lives in Lisbon.', assistant: 'Lisbon is lovely in spring.' },
    ],
  });
  await post(url, '/memory/agents/helper/facts', { text: 'Drinks green tea, never coffee' });
  await post(url, '/memory/agents/helper/facts', { text: 'Has a sister called Ana in Lisbon' });
  await post(url, '/memory/agents/helper/identity/name', { value: 'Sam' }, 'PUT');
  await post(url, '/memory/ingest', { agent_id: 'writer', conversation_id: 'x', skip_extraction: true, turns: [{ user: 'Hello', assistant: 'Hi' }] });
}

const app = sharedBrowserApp({ prepare: seed, page: { path: '/memory' } });

const facts = () => app.page.getByRole('list', { name: 'Facts' }).locator('.text').allInnerTexts();

describe('the Memory screen', () => {
  it('lists agents with counts and shows the facts of the first one', async () => {
    const agents = app.page.getByRole('navigation', { name: 'Agents' });
    await expect.poll(() => agents.locator('.agent-name').allInnerTexts()).toEqual(['helper', 'writer']);
    expect(await agents.locator('button', { hasText: 'helper' }).locator('.counts').innerText()).toBe('2 pinned · 0 episodes · 2 turns');
    // Newest first.
    await expect.poll(facts).toEqual(['Has a sister called Ana in Lisbon', 'Drinks green tea, never coffee']);
    await app.page.getByLabel('Search facts').fill('lisbon');
    await expect.poll(facts).toEqual(['Has a sister called Ana in Lisbon']);
    await app.page.getByLabel('Search facts').fill('');
  });

  it('pins, edits, unpins and forgets a fact, asking before it forgets', async () => {
    await app.page.getByLabel('Pin a fact').fill('Works night shifts');
    await app.page.getByRole('button', { name: 'Pin', exact: true }).click();
    await expect.poll(facts).toContain('Works night shifts');

    await app.page.getByRole('button', { name: 'Edit: Works night shifts' }).click();
    await app.page.getByLabel('Fact text').fill('Works night shifts at the hospital');
    await app.page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(facts).toContain('Works night shifts at the hospital');

    const item = app.page.getByRole('listitem', { name: 'Works night shifts at the hospital' });
    await item.getByRole('button', { name: /^Unpin/ }).click();
    await expect.poll(() => item.locator('.badge').innerText()).toBe('Suggested');

    await item.getByRole('button', { name: /^Forget/ }).click();
    const confirm = item.getByRole('group', { name: 'Forget this fact?' });
    expect(await app.page.evaluate(() => document.activeElement?.textContent)).toBe('Keep');
    await screenshot(app.page, 'memory-forget-confirm');
    await confirm.getByRole('button', { name: 'Keep' }).click();
    expect(await facts()).toContain('Works night shifts at the hospital');
    await item.getByRole('button', { name: /^Forget/ }).click();
    await item.getByRole('button', { name: 'Forget', exact: true }).click();
    await expect.poll(facts).not.toContain('Works night shifts at the hospital');
    const stored = (await (await fetch(`${app.server.url}/memory/agents/helper/facts`)).json()) as { items: { text: string }[] };
    expect(stored.items.map((fact) => fact.text)).not.toContain('Works night shifts at the hospital');
  });

  it('edits and forgets an identity entry, asking before it forgets, with the focus where the person works', async () => {
    await app.page.getByRole('tab', { name: /^Identity/ }).click();
    const identity = app.page.getByRole('list', { name: 'Identity' });
    const entries = () => identity.locator('.text').allInnerTexts();
    await expect.poll(entries).toEqual(['name: Sam']);
    // An entry whose key is also the name of a field of the add form ("value").
    await app.page.getByLabel('Add to identity').fill('value');
    await app.page.getByLabel('Value', { exact: true }).fill('Kindness');
    await app.page.locator('form.add').getByRole('button', { name: 'Save' }).click();
    await expect.poll(entries).toContain('value: Kindness');

    await identity.getByRole('button', { name: 'Edit value' }).click();
    // The focus is in this entry's own field, not in the add form's field of the same name.
    await expect.poll(() => app.page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).toBe('Kindness');
    await app.page.keyboard.press('Escape');

    const item = identity.getByRole('listitem', { name: 'value' });
    await item.getByRole('button', { name: 'Forget value' }).click();
    expect(await app.page.evaluate(() => document.activeElement?.textContent)).toBe('Keep');
    await item.getByRole('group', { name: 'Forget value?' }).getByRole('button', { name: 'Keep' }).click();
    expect(await entries()).toContain('value: Kindness');
    await item.getByRole('button', { name: 'Forget value' }).click();
    await item.getByRole('button', { name: 'Forget', exact: true }).click();
    await expect.poll(entries).toEqual(['name: Sam']);
    const stored = (await (await fetch(`${app.server.url}/memory/agents/helper/identity`)).json()) as { items: { key: string }[] };
    expect(stored.items.map((entry) => entry.key)).toEqual(['name']);
    await app.page.getByRole('tab', { name: /^Facts/ }).click();
  });

  it("searches the transcript with the companion's search", async () => {
    await app.page.getByRole('tab', { name: /^Transcript/ }).click();
    await expect.poll(() => app.page.getByRole('list', { name: 'Transcript' }).locator('li').count()).toBe(2);
    await app.page.getByLabel('Search transcript').fill('bicycle');
    const results = app.page.getByRole('list', { name: 'Search results' });
    await expect.poll(() => results.locator('.text').allInnerTexts()).toHaveLength(1);
    expect((await results.locator('.text').innerText()).toLowerCase()).toContain('red bicycle');
    await screenshot(app.page, 'memory-transcript-search');
  });

  it('previews what would be recalled for a question, with the budget used', async () => {
    const question = 'Which green tea does Sam drink?';
    await app.page.getByLabel('Question').fill(question);
    await app.page.getByRole('button', { name: 'Preview' }).click();
    const recalled = app.page.getByRole('list', { name: 'Recalled items' });
    const expected = (await post(app.server.url, '/memory/context', { agent_id: 'helper', query: question })) as {
      tokens: number;
      budget_tokens: number;
      items: { text: string }[];
    };
    expect(expected.items.map((item) => item.text)).toContain('Drinks green tea, never coffee');
    // Exactly what the companion would inject, in order, and the budget it uses.
    await expect.poll(() => recalled.locator('.text').allInnerTexts()).toEqual(expected.items.map((item) => item.text));
    expect(await app.page.getByTestId('recall-budget').locator('span').innerText()).toBe(
      `${expected.tokens} of ${expected.budget_tokens} tokens used · ${expected.items.length} ${expected.items.length === 1 ? 'item' : 'items'}`,
    );
    await screenshot(app.page, 'memory-recall');
  });

  it('flushes and consolidates, saying what happened', async () => {
    await app.page.getByRole('button', { name: 'Remember now' }).click();
    await expect.poll(() => app.page.locator('.notice[role="status"]').innerText()).toBe('Nothing was waiting to be remembered.');
    await app.page.getByRole('button', { name: 'Consolidate' }).click();
    await expect.poll(() => app.page.locator('.notice[role="status"]').innerText()).toMatch(/^Consolidated: \d+ episodes merged/);
    await app.page
      .getByRole('navigation', { name: 'Agents' })
      .getByRole('button', { name: /^writer/ })
      .click();
    await expect.poll(() => app.page.getByRole('heading', { name: 'writer' }).count()).toBe(1);
    expect(app.errors).toEqual([]);
  });
});
