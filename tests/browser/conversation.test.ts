/**
 * Conversations that never dead-end, in real Chromium against a real `hearth serve` with the tiny
 * model: a conversation that outgrows the 2,048-token context goes on under each overflow policy
 * with the left-out messages marked; an edited question forks; a failed send puts the text back.
 * And a chat with an agent (on the scripted OpenAI-compatible provider, whose requests show what
 * the run recalled): a pinned fact recalled, a tool call approved inline, the exchange on Memory.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedProvider, type ScriptedProvider } from '../fixtures/scripted-provider.js';
import { agentDataDir } from '../helpers/agents.js';
import { tinyEmbeddingModelPath, tinyModelPath } from '../helpers/models.js';
import { startServer } from '../helpers/server.js';
import { chooseModel, lastReply, replyEnds, send, setSetting } from './app-helpers.js';
import { DESKTOP, screenshot, sharedBrowserApp, SIZES, SCHEMES } from './harness.js';

let provider: ScriptedProvider;

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
});
afterAll(() => provider?.close());

const app = sharedBrowserApp({
  async server() {
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
    return startServer({ dataDir });
  },
  page: { colorScheme: 'light', signIn: true },
});
beforeAll(() => chooseModel(app.page, 'companion:tiny'));

const box = () => app.page.getByLabel('Message', { exact: true });
const users = () => app.page.locator('article[data-role="user"]');
const newConversation = () => app.page.getByRole('button', { name: 'New conversation' }).click();

async function setPolicy(label: 'Stop at the limit' | 'Truncate the middle' | 'Rolling window') {
  const toggle = app.page.getByRole('button', { name: 'Settings' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await app.page.getByLabel("When the conversation outgrows the model's context").selectOption({ label });
}

/** Sends and waits for the reply to end, whether it is written or refused. */
async function exchange(text: string): Promise<string> {
  await send(app.page, text);
  const handle = await app.page.waitForFunction(
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
    await setSetting(app.page, 'Max tokens', '400');
    await setPolicy('Stop at the limit');
    let turn = 0;
    let status = 'done';
    while (status === 'done' && turn < 12) status = await exchange(`Turn ${++turn}: tell me more about the hearth and the house.`);
    expect(status).toBe('error');
    expect(turn).toBeGreaterThan(2);
    const alert = app.page.getByRole('alert');
    await expect
      .poll(() => alert.innerText())
      .toMatch(/no longer fits: it is about [\d,]+ tokens, and tiny's context holds 2,048 tokens, 1,648 of them for the conversation/);
    // Nothing was sent: the question is back in the composer, and the error is said once.
    expect(await box().inputValue()).toBe(`Turn ${turn}: tell me more about the hearth and the house.`);
    expect(await app.page.getByText(/no longer fits/).count()).toBe(1);
    await screenshot(app.page, 'chat-overflow-stop-desktop-light');

    await alert.getByRole('button', { name: 'Use a rolling window' }).click();
    expect(await replyEnds(app.page, 'done', 120_000)).not.toBe('');
    expect(await box().inputValue()).toBe('');
    await app.page.getByTestId('left-out').first().waitFor();
    expect(await app.page.getByTestId('left-out').first().innerText()).toMatch(/left out of what the model sees, to fit its context \(rolling window\)/);
    // The rolling window leaves out the oldest turns, the first question among them.
    expect(await users().first().getAttribute('data-omitted')).toBe('true');
    expect(await users().last().getAttribute('data-omitted')).toBeNull();

    await setPolicy('Truncate the middle');
    expect(await exchange(`Turn ${++turn}: and the garden?`)).toBe('done');
    // Truncating the middle keeps the first exchange and leaves out turns after it.
    expect(await users().first().getAttribute('data-omitted')).toBeNull();
    expect(await users().nth(1).getAttribute('data-omitted')).toBe('true');
    expect(await app.page.getByTestId('left-out').first().innerText()).toMatch(/\(truncate the middle\)/);
    await screenshot(app.page, 'chat-overflow-marker-desktop-light');
  });

  it('goes on by default after one reply filled the whole context', async () => {
    await newConversation();
    expect(await app.page.getByLabel("When the conversation outgrows the model's context").inputValue()).toBe('truncate-middle');
    await setSetting(app.page, 'Max tokens', '');
    // No limit: the tiny model writes until the context is full.
    expect(await exchange('Tell me everything.')).toBe('done');
    expect(await lastReply(app.page).getByTestId('stats').innerText()).toMatch(/^[\d,]+ tokens · [\d,]+ prompt/);
    expect(await exchange('And then?')).toBe('done');
    expect(await app.page.getByTestId('left-out').count()).toBe(1);
    expect(await exchange('And after that?')).toBe('done');
  });
});

describe('editing and resending', () => {
  it('forks the conversation at the edited question, and the earlier version stays', async () => {
    await newConversation();
    await setSetting(app.page, 'Max tokens', '12');
    expect(await exchange('First question')).toBe('done');
    expect(await exchange('Second question')).toBe('done');
    await users().first().getByRole('button', { name: 'Edit message' }).click();
    const editor = app.page.getByLabel('Edited message');
    await editor.fill('First question, asked better');
    await app.page.getByRole('form', { name: 'Edit your message' }).getByRole('button', { name: 'Send' }).click();
    await replyEnds(app.page, 'done');
    expect(await users().allInnerTexts()).toEqual([expect.stringContaining('First question, asked better')]);
    const versions = users().first().getByRole('group', { name: 'Versions' });
    expect(await versions.innerText()).toContain('2 / 2');
    await screenshot(app.page, 'chat-edited-version-desktop-light');

    await versions.getByRole('button', { name: 'Previous version' }).click();
    await expect.poll(() => users().count()).toBe(2);
    expect(await users().first().innerText()).toContain('First question');
    expect(await users().nth(1).innerText()).toContain('Second question');
    await app.page.reload();
    await expect.poll(() => users().count()).toBe(2);
    expect(await users().first().getByRole('group', { name: 'Versions' }).innerText()).toContain('1 / 2');
  });

  it('folds a long question, and unfolds it on demand', async () => {
    const long = Array.from({ length: 30 }, (_, line) => `Line ${line + 1} of a long question.`).join('\n');
    await box().fill(long);
    await box().press('Enter');
    await replyEnds(app.page, 'done');
    const question = users().last();
    const text = question.locator('.plain');
    expect(await text.getAttribute('class')).toContain('folded');
    const folded = (await text.boundingBox())!.height;
    await question.getByRole('button', { name: 'Show all' }).click();
    expect((await text.boundingBox())!.height).toBeGreaterThan(folded * 2);
    await question.getByRole('button', { name: 'Show less' }).click();
    expect(await text.getAttribute('class')).toContain('folded');
    await screenshot(app.page, 'chat-long-question-desktop-light');
    await question.getByRole('button', { name: 'Delete message' }).click();
    await app.page.getByRole('group', { name: 'Delete this message?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => users().count()).toBe(2);
  });

  it('regenerates an earlier reply as a new version, and deletes a turn', async () => {
    const replies = app.page.locator('article[data-role="assistant"]');
    await replies.first().getByRole('button', { name: 'Regenerate reply' }).click();
    await replyEnds(app.page, 'done');
    expect(await users().count()).toBe(1);
    expect(await replies.first().getByRole('group', { name: 'Versions' }).innerText()).toContain('2 / 2');
    await users().first().getByRole('button', { name: 'Delete message' }).click();
    await app.page.getByRole('group', { name: 'Delete this message?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => app.page.locator('article').count()).toBe(0);
  });
});

describe('a failed send', () => {
  it('shows the error once at the failed turn, puts the text back, and is replaced when sent again', async () => {
    await newConversation();
    await chooseModel(app.page, 'companion:broken');
    expect(await exchange('This question will fail first.')).toBe('error');
    const alert = app.page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toMatch(/broken could not be loaded/);
    expect(await app.page.getByText(/broken could not be loaded/).count()).toBe(1);
    expect(await box().inputValue()).toBe('This question will fail first.');
    expect(await lastReply(app.page).isVisible()).toBe(true);
    await screenshot(app.page, 'chat-failed-send-desktop-light');

    await chooseModel(app.page, 'companion:tiny');
    await setSetting(app.page, 'Max tokens', '8');
    await box().press('Enter');
    await replyEnds(app.page, 'done');
    expect(await users().locator('.plain').allInnerTexts()).toEqual(['This question will fail first.']);
    expect(await app.page.locator('article[data-role="assistant"]').count()).toBe(1);
  });
});

describe('a chat with an agent', () => {
  it('is where memory comes from, as the empty Memory screen says', async () => {
    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memory' }).click();
    const empty = app.page.getByTestId('memory-empty');
    await expect.poll(() => empty.innerText()).toMatch(/Memory fills as you talk with an agent/);
    expect(await empty.getByRole('link', { name: 'Chat with an agent' }).getAttribute('href')).toBe('/?agent=keeper');
    expect(await empty.getByRole('link', { name: 'Run an agent' }).getAttribute('href')).toBe('/agent');
    await screenshot(app.page, 'memory-empty-desktop-light');
    // The link opens a new conversation with the agent.
    await empty.getByRole('link', { name: 'Chat with an agent' }).click();
    await app.page.waitForFunction(() => document.querySelector('#model-picker')?.getAttribute('data-value') === 'agent:keeper');
    expect(new URL(app.page.url()).search).toBe('');
    expect(await app.page.locator('article').count()).toBe(0);
  });

  it('recalls a pinned fact, answers an approval inline, and the exchange shows on the Memory screen', async () => {
    const pinned = await fetch(`${app.server.url}/memory/agents/keeper/facts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: FACT }),
    });
    expect(pinned.status).toBe(201);
    await send(app.page, 'What is my favourite colour?');
    const card = lastReply(app.page).locator('details.call');
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('waiting for you');
    await screenshot(app.page, 'chat-agent-approval-desktop-light');
    await lastReply(app.page).getByRole('group', { name: 'Approve memory_pin' }).getByRole('button', { name: 'Approve' }).click();
    expect(await replyEnds(app.page, 'done')).toContain('Your favourite colour is teal.');
    expect(await card.getAttribute('data-state')).toBe('done');
    // What the run sent the model: the agent's instructions and the pinned fact it recalled.
    const system = provider.requests[0]!.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain(FACT);
    await screenshot(app.page, 'chat-agent-desktop-light');

    await app.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memory' }).click();
    await app.page
      .getByRole('navigation', { name: 'Agents' })
      .getByRole('button', { name: /Keeper/ })
      .waitFor();
    await app.page.getByRole('tab', { name: /Transcript/ }).click();
    await app.page.getByText('What is my favourite colour?').waitFor();
    await app.page.getByText('Your favourite colour is teal.').waitFor();
    expect(await app.page.locator('#agent-heading').innerText()).toBe('Keeper');
  });

  it('lets the owner choose a memory model when Remember now has none, and an embedding model when recall is by words only', async () => {
    await app.page.getByRole('button', { name: 'Remember now' }).click();
    await expect
      .poll(() => app.page.locator('.notice[role="status"]').innerText())
      .toMatch(/no memory model is available, so \d+ notes? from conversations waits?\./);
    await app.page.getByLabel('Memory model').selectOption('tiny');
    await app.page.getByRole('button', { name: 'Use for memory' }).click();
    await expect.poll(() => app.page.locator('.notice[role="status"]').innerText()).toMatch(/^tiny is now the memory model/);

    const lexical = app.page.getByTestId('lexical-only');
    await lexical.getByText('Recall matches words only').click();
    await screenshot(app.page, 'memory-lexical-desktop-light');
    await lexical.getByLabel('Embedding model').selectOption('tiny-embed');
    await lexical.getByRole('button', { name: 'Use for recall' }).click();
    await lexical.waitFor({ state: 'detached' });
    const config = parse(readFileSync(join(app.server.dataDir, 'config.yaml'), 'utf8')) as { memory: Record<string, string> };
    expect(config.memory).toMatchObject({ model: 'tiny', embedding_model: 'tiny-embed' });
  });
});

describe('screenshots of the chat', () => {
  it('in light and dark, on a phone and a desktop', async () => {
    const shots: [string, () => Promise<void>][] = [
      ['chat-agent', () => app.page.goto(app.server.url).then(() => app.page.locator('article').first().waitFor())],
      [
        'chat-overflow',
        async () => {
          if (!(await app.page.locator('nav[aria-label="Conversations"]').isVisible())) await app.page.getByRole('button', { name: 'Conversations' }).click();
          await app.page.locator('nav[aria-label="Conversations"] button.open', { hasText: 'Turn 1' }).first().click();
          await app.page.getByTestId('left-out').first().scrollIntoViewIfNeeded();
        },
      ],
      ['memory-agent', () => app.page.goto(`${app.server.url}/memory`).then(() => app.page.locator('#agent-heading').waitFor())],
    ];
    for (const scheme of SCHEMES) {
      await app.page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of SIZES) {
        await app.page.setViewportSize(viewport);
        for (const [name, show] of shots) {
          await show();
          const label = `${name}-${size}-${scheme}`;
          // Each picture shows the scheme it is named for, and the screen fits its width.
          await expect.poll(() => app.page.evaluate(() => document.documentElement.dataset.theme), { message: label }).toBe(scheme);
          const { scroll, width } = await app.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
          expect(scroll, label).toBeLessThanOrEqual(width);
          await screenshot(app.page, label);
        }
      }
    }
    await app.page.setViewportSize(DESKTOP);
    await app.page.emulateMedia({ colorScheme: 'light' });
  });

  it('reports no page errors but the refused load of the broken model', () => {
    expect(app.errors.filter((error) => !/status of 500/.test(error))).toEqual([]);
  });
});
