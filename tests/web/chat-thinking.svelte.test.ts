import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ModelRecord } from '#shared/api/openai.js';
import { chunk, emptyHistory, readyChat, thoughtChunk, usage } from './chat-store.js';
import { stubFetch } from '../helpers/fetch-stub.js';

/*
 * A reasoning model's thought in the chat: streamed apart from the answer into the reply, with how
 * long it took, stored with it (a thought cut off by a reload too), never sent back as the answer;
 * the conversation's Thinking switch asks the model not to think.
 */

const { listConversations } = await import('$lib/storage/conversations');
const { models } = await import('$lib/stores/models.svelte');
const { streamChat } = await import('$lib/api/chat');
const encoder = new TextEncoder();

const record = (id: string, capabilities: ModelRecord['capabilities']) =>
  ({ id, object: 'model', created: 1, owned_by: 'hearth', source: 'local', capabilities, context_window: 4096, loaded: true }) as ModelRecord;

/** The companion answers with a thought in two pieces, then the answer; returns the request bodies. */
function companion(
  answer = () => new Response(thoughtChunk('Let me ') + thoughtChunk('think.', 'reasoning') + chunk('Four.') + usage(9, 5) + 'data: [DONE]\n\n'),
) {
  const bodies: Record<string, unknown>[] = [];
  stubFetch(async (path, init) => {
    if (path === '/health') return Response.json({ status: 'ok', version: '1' });
    if (path !== '/v1/chat/completions') throw new TypeError(`unexpected ${path}`);
    bodies.push(JSON.parse(String(init.body)) as Record<string, unknown>);
    return answer();
  });
  return bodies;
}

beforeEach(async () => {
  await emptyHistory();
  models.companion = [record('thinker', ['chat', 'reasoning']), record('tiny', ['chat'])];
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('streamChat', () => {
  it('hands reasoning_content and reasoning pieces to onReasoning, apart from the text', async () => {
    companion();
    const pieces: string[] = [];
    const result = await streamChat({ model: 'thinker', messages: [{ role: 'user', content: '2+2?' }], onReasoning: (text) => pieces.push(text) });
    expect(pieces).toEqual(['Let me ', 'think.']);
    expect(result).toMatchObject({ text: 'Four.', reasoning: 'Let me think.' });
  });
});

describe('a reasoning model in the chat', () => {
  it('keeps the thought and how long it took with the reply, and sends earlier replies as their answer only', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:thinker');
    await chat.send('What is 2+2?');
    const reply = chat.active!.messages[1]!;
    expect(reply).toMatchObject({ content: 'Four.', reasoning: 'Let me think.', status: 'done' });
    expect(reply.reasoningMs).toBeTypeOf('number');
    expect(reply.reasoningMs).toBeGreaterThanOrEqual(0);
    const [stored] = await listConversations();
    expect(stored?.messages[1]).toMatchObject({ reasoning: 'Let me think.', reasoningMs: reply.reasoningMs });

    await chat.send('And 3+3?');
    expect(bodies[1]?.messages).toEqual([
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: 'Four.' },
      { role: 'user', content: 'And 3+3?' },
    ]);
  });

  it('asks for reasoning_effort none with Thinking off, medium under a reply limit, and nothing by default', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:thinker');
    await chat.send('one');
    expect(bodies[0]).not.toHaveProperty('reasoning_effort');
    await chat.updateSettings({ maxTokens: 64 });
    await chat.send('two');
    expect(bodies[1]).toMatchObject({ reasoning_effort: 'medium', max_tokens: 64 });
    await chat.updateSettings({ thinking: false });
    await chat.send('three');
    expect(bodies[2]).toMatchObject({ reasoning_effort: 'none' });
  });

  it('sends no reasoning_effort to a model that does not think, whatever the switch says', async () => {
    const bodies = companion(() => new Response(chunk('Hi') + 'data: [DONE]\n\n'));
    const chat = await readyChat('companion:tiny');
    await chat.updateSettings({ thinking: false, maxTokens: 64 });
    await chat.send('hello');
    expect(bodies[0]).not.toHaveProperty('reasoning_effort');
    expect(chat.active!.messages[1]?.reasoning).toBeUndefined();
  });

  it('keeps a thought cut off by a reload, with no time (it never finished), also when asked again', async () => {
    let requests = 0;
    companion(() =>
      ++requests > 1
        ? new Response(chunk('Done.') + 'data: [DONE]\n\n')
        : new Response(
            new ReadableStream<Uint8Array>({
              start(controller) {
                controller.enqueue(encoder.encode(thoughtChunk('Halfway through')));
              },
            }),
          ),
    );
    const before = await readyChat('companion:thinker');
    void before.send('Think hard');
    await vi.waitFor(async () => {
      const [stored] = await listConversations();
      expect(stored?.messages[1]).toMatchObject({ reasoning: 'Halfway through', content: '', status: 'streaming' });
    });

    const after = await readyChat('companion:thinker');
    expect(after.active?.messages[1]).toMatchObject({ reasoning: 'Halfway through', status: 'interrupted' });
    expect(after.active?.messages[1]?.reasoningMs).toBeUndefined();
    before.stop();
    // Something came back (the thought): sending again keeps the turn rather than replacing it.
    await after.send('Think again');
    expect(after.active?.messages.map((message) => message.reasoning ?? message.content)).toEqual(['Think hard', 'Halfway through', 'Think again', 'Done.']);
  });
});
