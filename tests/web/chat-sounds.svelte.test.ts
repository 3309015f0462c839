import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { speechWav, SPEECH_RATE } from '$lib/media/wav';
import { chunk, companionChat, emptyHistory, engineCalls, modelRecord, readyChat, usage } from './chat-store.js';

/*
 * Recordings in the chat store: the microphone's WAV attached into the composer, sent as an
 * input_audio part (format wav) before the text to a model that hears, stored beside the
 * conversation in IndexedDB (read back after a reload, deleted with it), refused before sending to
 * a model that cannot hear (kept in the composer), and a placeholder to such a model afterwards.
 */
vi.mock('$lib/engines/host', async () => {
  const { wordsEngine } = await import('./chat-store.js');
  return { ENGINE_KINDS: ['wllama'], engineHost: () => ({ engine: () => wordsEngine }) };
});

const { ChatStore } = await import('$lib/stores/chat.svelte');
const { listConversations } = await import('$lib/storage/conversations');
const { mediaOf, readMedia } = await import('$lib/storage/media');
const { models } = await import('$lib/stores/models.svelte');

const record = modelRecord;

/** `seconds` of a quiet tone, as the microphone writes it: a 16 kHz mono WAV. */
const clip = (seconds: number) => speechWav([Float32Array.from({ length: SPEECH_RATE * seconds }, (_, index) => 0.1 * Math.sin(index / 5))], SPEECH_RATE);
const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''));

const companion = (answer = () => new Response(chunk('A beep.') + usage(300, 2) + 'data: [DONE]\n\n')) => companionChat(answer);

beforeEach(async () => {
  await emptyHistory();
  engineCalls.length = 0;
  models.companion = [record('tiny', ['chat']), record('tiny-audio', ['chat', 'audio'])];
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('recordings in a message', () => {
  it('go as input_audio parts (wav) before the text, are stored with the conversation and read back after a reload', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-audio');
    const wav = clip(2);
    chat.attachSound(wav);
    chat.attachSound(clip(1));
    expect(chat.clips.map((sound) => sound.seconds)).toEqual([2, 1]);
    chat.removeSound(chat.clips[1]!.id);
    await chat.send('What do you hear?');

    expect(bodies[0]!.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_audio', input_audio: { data: base64(wav), format: 'wav' } },
          { type: 'text', text: 'What do you hear?' },
        ],
      },
    ]);
    expect(chat.clips).toEqual([]);
    const question = chat.active!.messages[0]!;
    expect(question.sounds).toEqual([{ id: expect.stringMatching(/^snd_/), type: 'audio/wav', seconds: 2 }]);
    // A prompt with a recording says nothing about the tokenizer: no characters to calibrate against.
    expect(chat.active!.messages[1]!.stats?.promptChars).toBeUndefined();

    const reloaded = new ChatStore();
    await reloaded.init();
    expect(reloaded.active!.messages[0]!.sounds).toEqual(question.sounds);
    const stored = await readMedia(question.sounds![0]!.id);
    expect(stored?.type).toBe('audio/wav');
    expect(stored?.size).toBe(wav.byteLength);

    // The next question sends the conversation's recording again, with the history.
    await reloaded.send('And now?');
    expect(bodies[1]!.messages[0]).toEqual(bodies[0]!.messages[0]);
  });

  it('may be sent without text; a conversation that starts so is titled after it', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-audio');
    chat.attachSound(clip(1));
    await chat.send('');
    expect(bodies[0]!.messages[0]!.content).toEqual([{ type: 'input_audio', input_audio: { data: expect.any(String), format: 'wav' } }]);
    expect(chat.active!.title).toBe('A recording');
  });

  it('are refused before sending to a model that cannot hear, and stay in the composer with the text', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny');
    chat.draft = 'What do you hear?';
    chat.attachSound(clip(1));
    expect(chat.soundRefusal).toEqual({
      message: expect.stringMatching(/^tiny cannot hear recordings: .* Switch to tiny-audio, which hears sound/),
      alternative: { key: 'companion:tiny-audio', label: 'tiny-audio' },
    });
    await chat.send(chat.draft);
    expect(bodies).toEqual([]);
    expect(chat.problem?.message).toBe(chat.soundRefusal?.message);
    expect(chat.conversations).toEqual([]);
    expect(chat.draft).toBe('What do you hear?');
    expect(chat.clips).toHaveLength(1);

    chat.model = 'companion:tiny-audio';
    expect(chat.soundRefusal).toBeNull();
    await chat.send(chat.draft);
    expect(bodies).toHaveLength(1);
    // The new conversation took the composer's recording along.
    expect(chat.active!.messages[0]!.sounds).toHaveLength(1);
    expect(chat.clips).toEqual([]);
  });

  it('reach a model that cannot hear (on the companion or in the browser) as a placeholder each', async () => {
    const bodies = companion();
    const chat = await readyChat('companion:tiny-audio');
    chat.attachSound(clip(1));
    await chat.send('What do you hear?');
    chat.model = 'companion:tiny';
    await chat.send('Tell me more.');
    expect(bodies[1]!.messages[0]).toEqual({ role: 'user', content: '[audio]\nWhat do you hear?' });

    chat.model = 'wllama:tiny.gguf';
    await chat.send('And in the browser?');
    expect(engineCalls[0]!.messages[0]).toEqual({ role: 'user', content: '[audio]\nWhat do you hear?' });
  });

  it('come back to the composer when the reply fails, and are not stored twice when sent again', async () => {
    let fail = true;
    companion(() =>
      fail
        ? Response.json({ error: { message: 'The model could not be loaded.', type: 'server_error', code: 'model_load_failed', param: null } }, { status: 500 })
        : new Response(chunk('A beep.') + 'data: [DONE]\n\n'),
    );
    const chat = await readyChat('companion:tiny-audio');
    chat.attachSound(clip(1));
    await chat.send('What do you hear?');
    expect(chat.problem?.returned).toBe(true);
    await vi.waitFor(() => expect(chat.clips).toHaveLength(1));
    expect(chat.clips[0]!.seconds).toBe(1);

    fail = false;
    await chat.send(chat.draft);
    expect(chat.active!.messages.map((message) => [message.role, message.content, message.sounds?.length])).toEqual([
      ['user', 'What do you hear?', 1],
      ['assistant', 'A beep.', undefined],
    ]);
    expect(await mediaOf(chat.activeId!)).toEqual([chat.active!.messages[0]!.sounds![0]!.id]);
  });

  it('are deleted with their conversation, and with a deleted turn', async () => {
    companion();
    const chat = await readyChat('companion:tiny-audio');
    chat.attachSound(clip(1));
    await chat.send('First');
    chat.attachSound(clip(1));
    await chat.send('Second');
    const id = chat.activeId!;
    expect(await mediaOf(id)).toHaveLength(2);

    await chat.deleteTurn(chat.active!.messages[2]!.id);
    expect(await mediaOf(id)).toEqual([chat.active!.messages[0]!.sounds![0]!.id]);

    await chat.remove(id);
    expect(await mediaOf(id)).toEqual([]);
    expect(await listConversations()).toEqual([]);
  });
});
