/**
 * The chat store beyond one exchange: failed sends, edits that fork, regenerating any reply,
 * deleting turns, the overflow policies applied to real requests, and chats with an agent.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentRun, AgentRunEvent } from '#shared/api/agents.js';
import type { ModelRecord } from '#shared/api/openai.js';
import type { ChatStore } from '$lib/stores/chat.svelte';
import { chunk, emptyHistory, readyChat, usage } from './chat-store.js';
import { agentRecord, agentRun } from '../helpers/agent-records.js';
import { stubFetch } from '../helpers/fetch-stub.js';
import { modelRecord } from '../helpers/model-record.js';

vi.mock('$lib/engines/host', () => ({ ENGINE_KINDS: [], engineHost: () => ({ engine: () => undefined }) }));

const { models } = await import('$lib/stores/models.svelte');
const { agents } = await import('$lib/stores/agents.svelte');
const { listConversations } = await import('$lib/storage/conversations');

const refused = (message: string, code = 'context_length_exceeded', status = 400) =>
  Response.json({ error: { message, type: 'invalid_request_error', code, param: 'messages' } }, { status });

type Body = { messages: { role: string; content: string }[]; [key: string]: unknown };
interface Routes {
  chat?: (body: Body, count: number) => Response;
  run?: (agent: string, body: Record<string, unknown>, count: number) => Response;
}

function companion(routes: Routes) {
  const chats: Body[] = [];
  const runs: Record<string, unknown>[] = [];
  stubFetch(async (path, init) => {
    if (path === '/v1/chat/completions') {
      const body = JSON.parse(String(init.body)) as Body;
      chats.push(body);
      return routes.chat?.(body, chats.length) ?? new Response(chunk(`reply ${chats.length}`) + usage(10, 2) + 'data: [DONE]\n\n');
    }
    const run = /^\/agents\/([^/]+)\/run$/.exec(path);
    if (run) {
      const body = JSON.parse(String(init.body)) as Record<string, unknown>;
      runs.push(body);
      return routes.run!(run[1]!, body, runs.length);
    }
    if (path === '/v1/models') return Response.json({ object: 'list', data: models.companion });
    if (path === '/health') return Response.json({ status: 'ok', version: '1' });
    if (path.startsWith('/agents/approvals')) return Response.json({ object: 'list', data: [] });
    throw new TypeError(`unexpected ${path}`);
  });
  return { chats, runs };
}

const tiny = (contextWindow: number | null): ModelRecord => modelRecord('tiny', { loaded: true, context_length: 2048, context_window: contextWindow });

beforeEach(async () => {
  await emptyHistory();
  models.companion = [tiny(null)];
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const contents = (chat: ChatStore) => chat.active!.messages.map((message) => message.content);

describe('a failed send', () => {
  it('shows the error once on the failed reply, puts the question back into the composer, and is replaced by the next send', async () => {
    let fail = true;
    companion({
      chat: (_body, count) =>
        fail ? refused('The model could not be loaded.', 'model_load_failed', 404) : new Response(chunk(`ok ${count}`) + 'data: [DONE]\n\n'),
    });
    const chat = await readyChat();
    await chat.send('Hello there');
    const failed = chat.active!.messages.at(-1)!;
    expect(failed).toMatchObject({ role: 'assistant', status: 'error', error: 'The model could not be loaded.' });
    expect(chat.problem).toMatchObject({ kind: 'failed', messageId: failed.id });
    expect(chat.draft).toBe('Hello there');

    fail = false;
    await chat.send(chat.draft);
    expect(contents(chat)).toEqual(['Hello there', 'ok 2']);
    expect(chat.draft).toBe('');
    expect(chat.problem).toBeNull();
  });

  it('keeps what the user typed meanwhile instead of overwriting it', async () => {
    companion({ chat: () => refused('Nope.', 'model_load_failed', 404) });
    const chat = await readyChat();
    await chat.send('first');
    chat.draft = 'something else';
    await chat.regenerate();
    expect(chat.draft).toBe('something else');
  });
});

describe('forks', () => {
  /** A chat on the companion's default replies after two exchanges: one, reply 1, two, reply 2. */
  async function twoExchanges() {
    const { chats } = companion({});
    const chat = await readyChat();
    await chat.send('one');
    await chat.send('two');
    return { chat, chats };
  }

  it('an edited question forks the conversation; the old branch stays as a version to go back to', async () => {
    const { chat, chats } = await twoExchanges();
    const second = chat.active!.messages[2]!;
    await chat.edit(second.id, 'two, edited');
    expect(contents(chat)).toEqual(['one', 'reply 1', 'two, edited', 'reply 3']);
    expect(chats.at(-1)!.messages.map((message) => message.content)).toEqual(['one', 'reply 1', 'two, edited']);
    expect(chat.versionAt(2)).toEqual({ position: 2, count: 2 });

    await chat.showVersion(2, 1);
    expect(contents(chat)).toEqual(['one', 'reply 1', 'two', 'reply 2']);
    expect(chat.versionAt(2)).toEqual({ position: 1, count: 2 });
    const [stored] = await listConversations();
    expect(stored!.messages.map((message) => message.content)).toEqual(['one', 'reply 1', 'two', 'reply 2']);
  });

  it('regenerates any reply: an earlier one forks there and the later turns stay in the old version', async () => {
    const { chat } = await twoExchanges();
    await chat.regenerate(chat.active!.messages[1]!.id);
    expect(contents(chat)).toEqual(['one', 'reply 3']);
    expect(chat.versionAt(1)).toEqual({ position: 2, count: 2 });
    await chat.showVersion(1, 1);
    expect(contents(chat)).toEqual(['one', 'reply 1', 'two', 'reply 2']);
  });

  it('deletes a question with its reply, or a reply alone', async () => {
    const { chat } = await twoExchanges();
    await chat.deleteTurn(chat.active!.messages[3]!.id);
    expect(contents(chat)).toEqual(['one', 'reply 1', 'two']);
    await chat.deleteTurn(chat.active!.messages[0]!.id);
    expect(contents(chat)).toEqual(['two']);
  });
});

describe('context overflow', () => {
  /** Three exchanges of 400-character messages, then a short question. */
  async function longConversation(chat: ChatStore) {
    for (const turn of [1, 2, 3]) await chat.send(`${turn} `.padEnd(400, 'q'));
  }
  const longReplies = (body: Body, count: number) =>
    new Response(chunk(`${count} `.padEnd(400, 'r')) + usage(body.messages.length * 100, 200) + 'data: [DONE]\n\n');

  /** A chat on tiny with a 1,000-token context window and these settings; the companion answers with long replies. */
  async function smallContextChat(settings: Parameters<ChatStore['updateSettings']>[0]) {
    const { chats } = companion({ chat: longReplies });
    models.companion = [tiny(1000)];
    const chat = await readyChat();
    await chat.updateSettings(settings);
    return { chat, chats };
  }

  it('truncates the middle by default: system prompt and first exchange kept, the oldest turns after it left out and marked', async () => {
    const { chat, chats } = await smallContextChat({ systemPrompt: 'Be brief.' });
    expect(chat.settings.overflow).toBe('truncate-middle');
    await longConversation(chat);
    await chat.send('and now?');
    const sent = chats.at(-1)!.messages;
    expect(sent[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(sent[1]!.content.startsWith('1 ')).toBe(true);
    expect(sent[2]!.role).toBe('assistant');
    expect(sent.at(-1)!.content).toBe('and now?');
    const reply = chat.active!.messages.at(-1)!;
    expect(reply.status).toBe('done');
    expect(reply.omitted!.length).toBeGreaterThan(0);
    const ids = chat.active!.messages.map((message) => message.id);
    expect(reply.omitted).toEqual(
      ids.filter((id) => !sent.some((message) => message.content === chat.active!.messages.find((m) => m.id === id)!.content)).filter((id) => id !== reply.id),
    );
  });

  it('rolling window: the newest turns only', async () => {
    const { chat, chats } = await smallContextChat({ overflow: 'rolling-window' });
    await longConversation(chat);
    await chat.send('and now?');
    const sent = chats.at(-1)!.messages.map((message) => message.content);
    expect(sent.some((content) => content.startsWith('1 '))).toBe(false);
    expect(sent.at(-1)).toBe('and now?');
    expect(chat.active!.messages.at(-1)!.omitted![0]).toBe(chat.active!.messages[0]!.id);
  });

  it('stop at the limit: sends nothing, says why, and continues with the policy the user picks', async () => {
    const { chat, chats } = await smallContextChat({ overflow: 'stop' });
    await longConversation(chat);
    const before = chats.length;
    await chat.send('and now?');
    expect(chats.length).toBe(before);
    expect(chat.problem).toMatchObject({ kind: 'overflow' });
    expect(chat.problem!.message).toMatch(
      /^This conversation no longer fits: it is about [\d,]+ tokens, and tiny's context holds 1,000 tokens, 750 of them for the conversation/,
    );
    expect(chat.draft).toBe('and now?');

    await chat.continueWithPolicy('rolling-window');
    expect(chats.length).toBe(before + 1);
    expect(chat.settings.overflow).toBe('rolling-window');
    expect(chat.active!.messages.at(-1)!.status).toBe('done');
    expect(chat.draft).toBe('');
  });

  it('estimates longer and fits again when the companion counts the prompt as too long', async () => {
    const { chats } = companion({
      chat: (body, count) => (count === 4 ? refused(`The messages use 1200 tokens, but tiny has a context of 1000 tokens.`) : longReplies(body, count)),
    });
    models.companion = [tiny(1000)];
    const chat = await readyChat();
    await longConversation(chat);
    await chat.send('and now?');
    expect(chats).toHaveLength(5);
    expect(chats[4]!.messages.length).toBeLessThan(chats[3]!.messages.length);
    expect(chat.active!.messages.at(-1)!.status).toBe('done');
  });
});

describe('a chat with an agent', () => {
  const helper = agentRecord({ instructions: 'Help.', max_steps: 5 });

  function runStream(id: string, conversation: string, text: string): Response {
    const run = agentRun(id, { conversation_id: conversation, input: [], created_at: 100 });
    const usage = { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 };
    const call = {
      call_id: 'call_1',
      name: 'current_time',
      arguments: '{}',
      class: 'read' as const,
      policy: 'auto' as const,
      decision: 'auto' as const,
      approval_id: null,
      output: 'noon',
      is_error: false,
    };
    const steps = [
      { index: 0, text: '', tool_calls: [call], usage, started_at: 100, completed_at: 101 },
      { index: 1, text, tool_calls: [], usage, started_at: 101, completed_at: 102 },
    ];
    const done: AgentRun = { ...run, status: 'completed', output_text: text, steps, usage, completed_at: 102 };
    const events: AgentRunEvent[] = [
      { type: 'run.created', sequence: 1, run_id: id, run },
      { type: 'tool_call.created', sequence: 2, run_id: id, step: 0, call_id: 'call_1', name: 'current_time', arguments: '{}' },
      { type: 'tool_call.completed', sequence: 3, run_id: id, step: 0, call_id: 'call_1', name: 'current_time', output: 'noon', is_error: false },
      { type: 'message.delta', sequence: 4, run_id: id, step: 1, delta: text },
      { type: 'run.completed', sequence: 5, run_id: id, run: done },
    ];
    return new Response(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
  }

  it('runs each turn as a run of the agent that continues its conversation, with the tool calls on the reply', async () => {
    const { runs } = companion({ run: (_agent, _body, count) => runStream(`run_${count}`, 'conv_a', `answer ${count}`) });
    agents.agents = [helper];
    const chat = await readyChat('agent:helper');
    await chat.send('What time is it?');
    const reply = chat.active!.messages.at(-1)!;
    expect(reply).toMatchObject({ content: 'answer 1', status: 'done', runId: 'run_1', model: 'agent:helper' });
    expect(reply.steps![0]!.calls[0]).toMatchObject({ name: 'current_time', output: 'noon' });
    expect(reply.stats).toMatchObject({ promptTokens: 40, completionTokens: 4, tokensPerSecond: 2 });
    expect(runs[0]).toEqual({ input: [{ role: 'user', content: 'What time is it?' }], stream: true });

    await chat.send('And tomorrow?');
    expect(runs[1]).toEqual({ input: 'And tomorrow?', stream: true, conversation_id: 'conv_a' });

    // An edit forks: the agent's conversation no longer matches, so a new one starts from the kept history.
    await chat.edit(chat.active!.messages[2]!.id, 'And yesterday?');
    expect(runs[2]).toEqual({
      input: [
        { role: 'user', content: 'What time is it?' },
        { role: 'assistant', content: 'answer 1' },
        { role: 'user', content: 'And yesterday?' },
      ],
      stream: true,
    });
  });
});
