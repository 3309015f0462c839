/**
 * Conversations that never dead-end, in real Chromium against a real `hearth serve` with the tiny
 * model: a conversation that outgrows the 2,048-token context goes on under each overflow policy
 * with the left-out messages marked; an edited question forks; a failed send puts the text back.
 * And a chat with an agent (on the scripted OpenAI-compatible provider, whose requests show what
 * the run recalled): a pinned fact recalled, a tool call approved inline, the exchange on Memory.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedProvider, type ScriptedProvider } from '../fixtures/scripted-provider.js';
import { agentDataDir } from '../helpers/agents.js';
import { tinyEmbeddingModelPath, tinyModelPath } from '../helpers/models.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { chooseModel, lastReply, replyEnds, send, setSetting, newSignInLink } from './app-helpers.js';
import { DESKTOP, launch, open, screenshot, SIZES, SCHEMES } from './harness.js';

let provider: ScriptedProvider;
let server: RunningServer;
let browser: Browser;
let page: Page;
let errors: string[];

const FACT = 'The owner’s favourite colour is teal.';

/** The agent's model: it answers from what the run recalled, after pinning a note it must be allowed to pin. */
function script(body: { messages: { role: string; content: string }[] }) {
  const system = body.messages.find((message) => message.role === 'system')?.content ?? '';
  const last = body.messages.at(-1)!;
  if (last.role === 'tool') return { content: system.includes('teal') ? 'Your favourite colour is teal.' : 'I do not know.' };
  return { content: 'Let me note that.', tool_calls: [{ name: 'memory_pin', arguments: { text: 'The owner asked about colours.' } }] };
}

beforeAll(async () => {
  provider = await startScriptedProvider({ script });
  const dataDir = await agentDataDir({
    provider,
    withModel: true,
    agents: [
      {
        id: 'keeper',
        name: 'Keeper',
        model: 'script/scripted',
        instructions: 'Answer from what you remember.',
        tools: ['memory_pin'],
        tool_policy: { read: 'auto', write: 'ask', exec: 'deny', network: 'deny' },
        memory: { enabled: true },
      },
    ],
  });
  // A model that is listed but cannot load: sending to it fails.
  const whole = readFileSync(await tinyModelPath());
  writeFileSync(join(dataDir, 'models', 'broken.gguf'), whole.subarray(0, Math.floor(whole.length / 2)));
  copyFileSync(await tinyEmbeddingModelPath(), join(dataDir, 'models', 'tiny-embed.gguf'));
  // Independent starts, overlapped.
  [server, browser] = await Promise.all([startServer({ dataDir }), launch()]);
  ({ page, errors } = await open(browser, server.url, { colorScheme: 'light', signInLink: await newSignInLink(server) }));
  await chooseModel(page, 'companion:tiny');
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await provider?.close();
});

const box = () => page.getByLabel('Message', { exact: true });
const users = () => page.locator('article[data-role="user"]');
const newConversation = () => page.getByRole('button', { name: 'New conversation' }).click();

async function setPolicy(label: 'Stop at the limit' | 'Truncate the middle' | 'Rolling window') {
  const toggle = page.getByRole('button', { name: 'Settings' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.getByLabel("When the conversation outgrows the model's context").selectOption({ label });
}

/** Sends and waits for the reply to end, whether it is written or refused. */
async function exchange(text: string): Promise<string> {
  await send(page, text);
  const handle = await page.waitForFunction(
    () => {
      const status = [...document.querySelectorAll('article[data-role="assistant"]')].at(-1)?.getAttribute('data-status');
      return status === 'done' || status === 'error' ? status : null;
    },
    undefined,
    { timeout: 120_000 },
  );
  return (await handle.jsonValue()) as string;
}

describe('a conversation longer than the context', () => {
  it('stops at the limit when asked to, says why, and goes on under the policy picked there, marking what is left out', async () => {
    await newConversation();
    await setSetting(page, 'Max tokens', '400');
    await setPolicy('Stop at the limit');
    let turn = 0;
    let status = 'done';
    while (status === 'done' && turn < 12) status = await exchange(`Turn ${++turn}: tell me more about the hearth and the house.`);
    expect(status).toBe('error');
    expect(turn).toBeGreaterThan(2);
    const alert = page.getByRole('alert');
    await expect
      .poll(() => alert.innerText())
      .toMatch(/no longer fits: it is about [\d,]+ tokens, and tiny's context holds 2,048 tokens, 1,648 of them for the conversation/);
    // Nothing was sent: the question is back in the composer, and the error is said once.
    expect(await box().inputValue()).toBe(`Turn ${turn}: tell me more about the hearth and the house.`);
    expect(await page.getByText(/no longer fits/).count()).toBe(1);
    await screenshot(page, 'chat-overflow-stop-desktop-light');

    await alert.getByRole('button', { name: 'Use a rolling window' }).click();
    expect(await replyEnds(page, 'done', 120_000)).not.toBe('');
    expect(await box().inputValue()).toBe('');
    await page.getByTestId('left-out').first().waitFor();
    expect(await page.getByTestId('left-out').first().innerText()).toMatch(/left out of what the model sees, to fit its context \(rolling window\)/);
    // The rolling window leaves out the oldest turns, the first question among them.
    expect(await users().first().getAttribute('data-omitted')).toBe('true');
    expect(await users().last().getAttribute('data-omitted')).toBeNull();

    await setPolicy('Truncate the middle');
    expect(await exchange(`Turn ${++turn}: and the garden?`)).toBe('done');
    // Truncating the middle keeps the first exchange and leaves out turns after it.
    expect(await users().first().getAttribute('data-omitted')).toBeNull();
    expect(await users().nth(1).getAttribute('data-omitted')).toBe('true');
    expect(await page.getByTestId('left-out').first().innerText()).toMatch(/\(truncate the middle\)/);
    await screenshot(page, 'chat-overflow-marker-desktop-light');
  });

  it('goes on by default after one reply filled the whole context', async () => {
    await newConversation();
    expect(await page.getByLabel("When the conversation outgrows the model's context").inputValue()).toBe('truncate-middle');
    await setSetting(page, 'Max tokens', '');
    // No limit: the tiny model writes until the context is full.
    expect(await exchange('Tell me everything.')).toBe('done');
    expect(await lastReply(page).getByTestId('stats').innerText()).toMatch(/^\d+ tokens · \d+ prompt/);
    expect(await exchange('And then?')).toBe('done');
    expect(await page.getByTestId('left-out').count()).toBe(1);
    expect(await exchange('And after that?')).toBe('done');
  });
});

describe('editing and resending', () => {
  it('forks the conversation at the edited question, and the earlier version stays', async () => {
    await newConversation();
    await setSetting(page, 'Max tokens', '12');
    expect(await exchange('First question')).toBe('done');
    expect(await exchange('Second question')).toBe('done');
    await users().first().getByRole('button', { name: 'Edit message' }).click();
    const editor = page.getByLabel('Edited message');
    await editor.fill('First question, asked better');
    await page.getByRole('form', { name: 'Edit your message' }).getByRole('button', { name: 'Send' }).click();
    await replyEnds(page, 'done');
    expect(await users().allInnerTexts()).toEqual([expect.stringContaining('First question, asked better')]);
    const versions = users().first().getByRole('group', { name: 'Versions' });
    expect(await versions.innerText()).toContain('2 / 2');
    await screenshot(page, 'chat-edited-version-desktop-light');

    await versions.getByRole('button', { name: 'Previous version' }).click();
    await expect.poll(() => users().count()).toBe(2);
    expect(await users().first().innerText()).toContain('First question');
    expect(await users().nth(1).innerText()).toContain('Second question');
    await page.reload();
    await expect.poll(() => users().count()).toBe(2);
    expect(await users().first().getByRole('group', { name: 'Versions' }).innerText()).toContain('1 / 2');
  });

  it('folds a long question, and unfolds it on demand', async () => {
    const long = Array.from({ length: 30 }, (_, line) => `Line ${line + 1} of a long question.`).join('\n');
    await box().fill(long);
    await box().press('Enter');
    await replyEnds(page, 'done');
    const question = users().last();
    const text = question.locator('.plain');
    expect(await text.getAttribute('class')).toContain('folded');
    const folded = (await text.boundingBox())!.height;
    await question.getByRole('button', { name: 'Show all' }).click();
    expect((await text.boundingBox())!.height).toBeGreaterThan(folded * 2);
    await question.getByRole('button', { name: 'Show less' }).click();
    expect(await text.getAttribute('class')).toContain('folded');
    await screenshot(page, 'chat-long-question-desktop-light');
    await question.getByRole('button', { name: 'Delete message' }).click();
    await page.getByRole('group', { name: 'Delete this message?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => users().count()).toBe(2);
  });

  it('regenerates an earlier reply as a new version, and deletes a turn', async () => {
    const replies = page.locator('article[data-role="assistant"]');
    await replies.first().getByRole('button', { name: 'Regenerate reply' }).click();
    await replyEnds(page, 'done');
    expect(await users().count()).toBe(1);
    expect(await replies.first().getByRole('group', { name: 'Versions' }).innerText()).toContain('2 / 2');
    await users().first().getByRole('button', { name: 'Delete message' }).click();
    await page.getByRole('group', { name: 'Delete this message?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('article').count()).toBe(0);
  });
});

describe('a failed send', () => {
  it('shows the error once at the failed turn, puts the text back, and is replaced when sent again', async () => {
    await newConversation();
    await chooseModel(page, 'companion:broken');
    expect(await exchange('This question will fail first.')).toBe('error');
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toMatch(/broken could not be loaded/);
    expect(await page.getByText(/broken could not be loaded/).count()).toBe(1);
    expect(await box().inputValue()).toBe('This question will fail first.');
    expect(await lastReply(page).isVisible()).toBe(true);
    await screenshot(page, 'chat-failed-send-desktop-light');

    await chooseModel(page, 'companion:tiny');
    await setSetting(page, 'Max tokens', '8');
    await box().press('Enter');
    await replyEnds(page, 'done');
    expect(await users().locator('.plain').allInnerTexts()).toEqual(['This question will fail first.']);
    expect(await page.locator('article[data-role="assistant"]').count()).toBe(1);
  });
});

describe('a chat with an agent', () => {
  it('is where memory comes from, as the empty Memory screen says', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memory' }).click();
    const empty = page.getByTestId('memory-empty');
    await expect.poll(() => empty.innerText()).toMatch(/Memory fills as you talk with an agent/);
    expect(await empty.getByRole('link', { name: 'Chat with an agent' }).getAttribute('href')).toBe('/?agent=keeper');
    expect(await empty.getByRole('link', { name: 'Run an agent' }).getAttribute('href')).toBe('/agent');
    await screenshot(page, 'memory-empty-desktop-light');
    // The link opens a new conversation with the agent.
    await empty.getByRole('link', { name: 'Chat with an agent' }).click();
    await page.waitForFunction(() => document.querySelector('#model-picker')?.getAttribute('data-value') === 'agent:keeper');
    expect(new URL(page.url()).search).toBe('');
    expect(await page.locator('article').count()).toBe(0);
  });

  it('recalls a pinned fact, answers an approval inline, and the exchange shows on the Memory screen', async () => {
    const pinned = await fetch(`${server.url}/memory/agents/keeper/facts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: FACT }),
    });
    expect(pinned.status).toBe(201);
    await send(page, 'What is my favourite colour?');
    const card = lastReply(page).locator('details.call');
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('waiting for you');
    await screenshot(page, 'chat-agent-approval-desktop-light');
    await lastReply(page).getByRole('group', { name: 'Approve memory_pin' }).getByRole('button', { name: 'Approve' }).click();
    expect(await replyEnds(page, 'done')).toContain('Your favourite colour is teal.');
    expect(await card.getAttribute('data-state')).toBe('done');
    // What the run sent the model: the agent's instructions and the pinned fact it recalled.
    const system = provider.requests[0]!.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain(FACT);
    await screenshot(page, 'chat-agent-desktop-light');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memory' }).click();
    await page
      .getByRole('navigation', { name: 'Agents' })
      .getByRole('button', { name: /Keeper/ })
      .waitFor();
    await page.getByRole('tab', { name: /Transcript/ }).click();
    await page.getByText('What is my favourite colour?').waitFor();
    await page.getByText('Your favourite colour is teal.').waitFor();
    expect(await page.locator('#agent-heading').innerText()).toBe('Keeper');
  });

  it('lets the owner choose a memory model when Remember now has none, and an embedding model when recall is by words only', async () => {
    await page.getByRole('button', { name: 'Remember now' }).click();
    await expect
      .poll(() => page.locator('.notice[role="status"]').innerText())
      .toMatch(/no memory model is available, so \d+ notes? from conversations waits?\./);
    await page.getByLabel('Memory model').selectOption('tiny');
    await page.getByRole('button', { name: 'Use for memory' }).click();
    await expect.poll(() => page.locator('.notice[role="status"]').innerText()).toMatch(/^tiny is now the memory model/);

    const lexical = page.getByTestId('lexical-only');
    await lexical.getByText('Recall matches words only').click();
    await screenshot(page, 'memory-lexical-desktop-light');
    await lexical.getByLabel('Embedding model').selectOption('tiny-embed');
    await lexical.getByRole('button', { name: 'Use for recall' }).click();
    await lexical.waitFor({ state: 'detached' });
    const config = parse(readFileSync(join(server.dataDir, 'config.yaml'), 'utf8')) as { memory: Record<string, string> };
    expect(config.memory).toMatchObject({ model: 'tiny', embedding_model: 'tiny-embed' });
  });
});

describe('screenshots of the chat', () => {
  it('in light and dark, on a phone and a desktop', async () => {
    const shots: [string, () => Promise<void>][] = [
      ['chat-agent', () => page.goto(server.url).then(() => page.locator('article').first().waitFor())],
      [
        'chat-overflow',
        async () => {
          if (!(await page.locator('nav[aria-label="Conversations"]').isVisible())) await page.getByRole('button', { name: 'Conversations' }).click();
          await page.locator('nav[aria-label="Conversations"] button.open', { hasText: 'Turn 1' }).first().click();
          await page.getByTestId('left-out').first().scrollIntoViewIfNeeded();
        },
      ],
      ['memory-agent', () => page.goto(`${server.url}/memory`).then(() => page.locator('#agent-heading').waitFor())],
    ];
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of SIZES) {
        await page.setViewportSize(viewport);
        for (const [name, show] of shots) {
          await show();
          const label = `${name}-${size}-${scheme}`;
          // Each picture shows the scheme it is named for, and the screen fits its width.
          await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme), { message: label }).toBe(scheme);
          const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
          expect(scroll, label).toBeLessThanOrEqual(width);
          await screenshot(page, label);
        }
      }
    }
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('reports no page errors but the refused load of the broken model', () => {
    expect(errors.filter((error) => !/status of 500/.test(error))).toEqual([]);
  });
});
