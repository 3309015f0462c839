import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentRun, AgentRunEvent } from '#shared/api/agents.js';
import type * as Downscale from '$lib/chat/downscale';
import { chunk, companionChat, emptyHistory, engineCalls, modelRecord, readyChat, usage } from './chat-store.js';
import { agentRecord, agentRun } from '../helpers/agent-records.js';
import { stubFetch } from '../helpers/fetch-stub.js';

/*
 * Images in the chat store: attached into the composer, sent as image_url parts with the text,
 * stored beside the conversation in IndexedDB (read back after a reload, deleted with it), refused
 * before sending to a model that cannot read them (kept in the composer), and a placeholder to a
 * model that reads text only; for an agent whose model reads them, the run's last message carries
 * them. jsdom cannot decode pictures: reading a file is the browser test's
 * (tests/browser/attachments.test.ts); here a file's size is in its name.
 */
vi.mock('$lib/chat/downscale', async (original) => {
  const actual = await original<typeof Downscale>();
  return {
    ...actual,
    prepareImage: async (file: File) => {
      if (!file.type.startsWith('image/')) throw new actual.ImageProblem(`"${file.name}" is not an image: attach a PNG, JPEG, WebP or GIF picture.`);
      const big = file.name.startsWith('big');
      return {
        blob: file,
        type: 'image/png',
        width: big ? 2048 : 8,
        height: big ? 1536 : 8,
        name: file.name,
        original: big ? { width: 4000, height: 3000 } : null,
      };
    },
  };
});

vi.mock('$lib/engines/host', async () => {
  const { wordsEngine } = await import('./chat-store.js');
  return { ENGINE_KINDS: ['wllama'], engineHost: () => ({ engine: () => wordsEngine }) };
});

const { ChatStore } = await import('$lib/stores/chat.svelte');
const { listConversations } = await import('$lib/storage/conversations');
const { dataUrlOf, mediaOf, readMedia } = await import('$lib/storage/media');
const { models } = await import('$lib/stores/models.svelte');
const { agents } = await import('$lib/stores/agents.svelte');

const record = modelRecord;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3];
const picture = (name: string) => new File([new Uint8Array(PNG)], name, { type: 'image/png' });
const DATA_URL = `data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`;

const companion = (answer = () => new Response(chunk('A dot.') + usage(300, 2) + 'data: [DONE]\n\n')) => companionChat(answer);

beforeEach(async () => {
  await emptyHistory();
  engineCalls.length = 0;
  models.companion = [record('tiny', ['chat']), record('tiny-vision', ['chat', 'vision'])];
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('images in a message', () => {
  it('go as image_url parts before the text, are stored with the conversation and read back after a reload', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('dot.png'), picture('second.png')]);
    expect(chat.attachments.map((image) => image.name)).toEqual(['dot.png', 'second.png']);
    chat.removeAttachment(chat.attachments[1]!.id);
    await chat.send('What is this?');

    expect(bodies[0]!.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: DATA_URL } },
          { type: 'text', text: 'What is this?' },
        ],
      },
    ]);
    expect(chat.attachments).toEqual([]);
    const question = chat.active!.messages[0]!;
    expect(question.images).toEqual([{ id: expect.stringMatching(/^img_/), type: 'image/png', width: 8, height: 8, name: 'dot.png' }]);
    // A prompt with images says nothing about the tokenizer: no characters to calibrate against.
    expect(chat.active!.messages[1]!.stats?.promptChars).toBeUndefined();

    const reloaded = new ChatStore();
    await reloaded.init();
    expect(reloaded.active!.messages[0]!.images).toEqual(question.images);
    const stored = await readMedia(question.images![0]!.id);
    expect(stored?.type).toBe('image/png');
    expect(await dataUrlOf(stored!)).toBe(DATA_URL);
  });

  it('may be sent without text; a conversation that starts so is titled after them', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('dot.png')]);
    await chat.send('');
    expect(bodies[0]!.messages[0]!.content).toEqual([{ type: 'image_url', image_url: { url: DATA_URL } }]);
    expect(chat.active!.title).toBe('An image');
  });

  it('say what was scaled down, and what could not be attached', async () => {
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('big.png'), new File(['hello'], 'notes.txt', { type: 'text/plain' })]);
    expect(chat.attachments.map((image) => image.name)).toEqual(['big.png']);
    expect(chat.attachNote).toBe(
      'Images are kept within 2,048 px on their longest side: big.png (4,000 × 3,000) was scaled down to 2,048 × 1,536. "notes.txt" is not an image: attach a PNG, JPEG, WebP or GIF picture.',
    );
  });

  it('are refused before sending to a model that cannot read them, and stay in the composer with the text', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny');
    chat.draft = 'What is this?';
    await chat.attach([picture('dot.png')]);
    expect(chat.imageRefusal).toEqual({
      message: expect.stringMatching(/^tiny cannot read images: .* Switch to tiny-vision, which reads images/),
      alternative: { key: 'companion:tiny-vision', label: 'tiny-vision' },
    });
    await chat.send(chat.draft);
    expect(bodies).toEqual([]);
    expect(chat.problem?.message).toBe(chat.imageRefusal?.message);
    expect(chat.conversations).toEqual([]);
    expect(chat.draft).toBe('What is this?');
    expect(chat.attachments).toHaveLength(1);

    chat.model = 'companion:tiny-vision';
    expect(chat.imageRefusal).toBeNull();
    await chat.send(chat.draft);
    expect(bodies).toHaveLength(1);
    // The new conversation took the composer's images along.
    expect(chat.active!.messages[0]!.images).toHaveLength(1);
    expect(chat.attachments).toEqual([]);
  });

  it('reach a text-only model (on the companion or in the browser) as a placeholder each', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('dot.png')]);
    await chat.send('What is this?');
    chat.model = 'companion:tiny';
    await chat.send('Tell me more.');
    expect(bodies[1]!.messages[0]).toEqual({ role: 'user', content: '[image]\nWhat is this?' });

    chat.model = 'wllama:tiny.gguf';
    await chat.send('And in the browser?');
    expect(engineCalls[0]!.messages[0]).toEqual({ role: 'user', content: '[image]\nWhat is this?' });
  });

  it('come back to the composer when the reply fails, and are not stored twice when sent again', async () => {
    let fail = true;
    companion(() =>
      fail
        ? Response.json({ error: { message: 'The model could not be loaded.', type: 'server_error', code: 'model_load_failed', param: null } }, { status: 500 })
        : new Response(chunk('A dot.') + 'data: [DONE]\n\n'),
    );
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('dot.png')]);
    await chat.send('What is this?');
    expect(chat.problem?.returned).toBe(true);
    await vi.waitFor(() => expect(chat.attachments).toHaveLength(1));
    expect(chat.draft).toBe('What is this?');

    fail = false;
    await chat.send(chat.draft);
    expect(chat.active!.messages.map((message) => [message.role, message.content, message.images?.length])).toEqual([
      ['user', 'What is this?', 1],
      ['assistant', 'A dot.', undefined],
    ]);
    expect(await mediaOf(chat.activeId!)).toEqual([chat.active!.messages[0]!.images![0]!.id]);
  });

  it('are deleted with their conversation, and with a deleted turn', async () => {
    companion();
    const chat = await readyChat('companion:tiny-vision');
    await chat.attach([picture('dot.png')]);
    await chat.send('First');
    await chat.attach([picture('second.png')]);
    await chat.send('Second');
    const id = chat.activeId!;
    expect(await mediaOf(id)).toHaveLength(2);

    await chat.deleteTurn(chat.active!.messages[2]!.id);
    expect(await mediaOf(id)).toEqual([chat.active!.messages[0]!.images![0]!.id]);

    await chat.remove(id);
    expect(await mediaOf(id)).toEqual([]);
    expect(await listConversations()).toEqual([]);
  });
});

describe('images to an agent', () => {
  /** The companion: a completed run for each POST /agents/{id}/run (its bodies kept), answering `answer N` in conversation conv_a. */
  function runs() {
    const bodies: Record<string, unknown>[] = [];
    stubFetch(async (path, init) => {
      if (path === '/health') return Response.json({ status: 'ok', version: '1' });
      if (path.startsWith('/agents/approvals')) return Response.json({ object: 'list', data: [] });
      if (path === '/v1/models') return Response.json({ object: 'list', data: models.companion });
      if (path !== '/agents/helper/run') throw new TypeError(`unexpected ${path}`);
      bodies.push(JSON.parse(String(init.body)) as Record<string, unknown>);
      const id = `run_${bodies.length}`;
      const run = agentRun(id, { conversation_id: 'conv_a', input: [], created_at: 100 });
      const done: AgentRun = { ...run, status: 'completed', output_text: `answer ${bodies.length}`, completed_at: 101 };
      const events: AgentRunEvent[] = [
        { type: 'run.created', sequence: 1, run_id: id, run },
        { type: 'run.completed', sequence: 2, run_id: id, run: done },
      ];
      return new Response(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
    });
    return bodies;
  }
  const withImage = (text: string) => [
    { type: 'image_url', image_url: { url: DATA_URL } },
    { type: 'text', text },
  ];

  it('go to an agent whose model reads them as image_url parts of the last message only; earlier ones are placeholders', async () => {
    const bodies = runs();
    agents.agents = [agentRecord({ model: 'tiny-vision' })];
    const chat = await readyChat('agent:helper');
    await chat.attach([picture('dot.png')]);
    expect(chat.imageRefusal).toBeNull();
    await chat.send('What is this?');
    expect(bodies[0]).toEqual({ input: [{ role: 'user', content: withImage('What is this?') }], stream: true });
    expect(chat.active!.messages.map((message) => [message.content, message.status ?? null])).toEqual([
      ['What is this?', null],
      ['answer 1', 'done'],
    ]);

    // The agent's conversation goes on: the new question alone, no image sent again.
    await chat.send('And now?');
    expect(bodies[1]).toEqual({ input: 'And now?', stream: true, conversation_id: 'conv_a' });

    // A new image in a continued conversation: the one message, with its image.
    await chat.attach([picture('second.png')]);
    await chat.send('Compare.');
    expect(bodies[2]).toEqual({ input: [{ role: 'user', content: withImage('Compare.') }], stream: true, conversation_id: 'conv_a' });

    // An edit forks: a new agent conversation from the kept turns, earlier images as placeholders, the edited question's with it.
    await chat.edit(chat.active!.messages[4]!.id, 'Compare them.');
    expect(bodies[3]).toEqual({
      input: [
        { role: 'user', content: '[image]\nWhat is this?' },
        { role: 'assistant', content: 'answer 1' },
        { role: 'user', content: 'And now?' },
        { role: 'assistant', content: 'answer 2' },
        { role: 'user', content: withImage('Compare them.') },
      ],
      stream: true,
    });
  });

  it('are refused before anything is sent to an agent whose model cannot read them, named with the agent and its model', async () => {
    const bodies = runs();
    agents.agents = [agentRecord({ model: 'tiny' })];
    const chat = await readyChat('agent:helper');
    chat.draft = 'What is this?';
    await chat.attach([picture('dot.png')]);
    expect(chat.imageRefusal).toEqual({
      message: expect.stringMatching(/^Helper runs on tiny, which cannot read images: .* switch to tiny-vision, which reads images/),
      alternative: { key: 'companion:tiny-vision', label: 'tiny-vision' },
    });
    await chat.send(chat.draft);
    expect(bodies).toEqual([]);
    expect(chat.attachments).toHaveLength(1);
    expect(chat.draft).toBe('What is this?');

    // Given a model that reads images, the same agent takes them.
    agents.agents = [agentRecord({ model: 'tiny-vision' })];
    expect(chat.imageRefusal).toBeNull();
    await chat.send(chat.draft);
    expect(bodies[0]).toEqual({ input: [{ role: 'user', content: withImage('What is this?') }], stream: true });
  });
});
