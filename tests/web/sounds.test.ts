/**
 * Recordings attached to a chat message: how long a WAV plays (the chip shows it), the placeholder
 * a model that cannot hear gets, what a recording costs in the context estimate, and the refusal
 * (in words) for a model that cannot hear, naming one that can.
 */
import { describe, expect, it } from 'vitest';
import type { ModelRecord } from '#shared/api/openai.js';
import { messageTokens, SOUND_TOKENS } from '$lib/chat/context';
import { clipLength, MAX_CLIP_SECONDS, soundRefusal, wavSeconds, withSoundPlaceholders } from '$lib/chat/sounds';
import { speechWav, SPEECH_RATE } from '$lib/media/wav';

const model = (id: string, capabilities: ModelRecord['capabilities'], extra: Partial<ModelRecord> = {}): ModelRecord => ({
  id,
  object: 'model',
  created: 0,
  owned_by: 'local',
  source: 'local',
  capabilities,
  ...extra,
});
const textOnly = model('tiny', ['chat']);
const hearing = model('tiny-audio', ['chat', 'audio']);
const atProvider = model('cloud/gpt', undefined, { source: 'provider', owned_by: 'cloud' });

describe('wavSeconds', () => {
  it('reads how long the microphone’s WAV plays from its header', () => {
    expect(wavSeconds(speechWav([new Float32Array(SPEECH_RATE * 3)], SPEECH_RATE))).toBe(3);
    // Recorded at 48 kHz, it is written at 16 kHz and plays as long.
    expect(wavSeconds(speechWav([new Float32Array(48_000 / 2)], 48_000))).toBeCloseTo(0.5, 3);
  });

  it('says 0 for bytes that are not a WAV', () => {
    expect(wavSeconds(new TextEncoder().encode('not a sound at all, just some words here to be long enough'))).toBe(0);
    expect(wavSeconds(new Uint8Array(4))).toBe(0);
  });
});

describe('clipLength', () => {
  it('shows minutes and seconds, and at least a second', () => {
    expect(clipLength(7.4)).toBe('0:07');
    expect(clipLength(MAX_CLIP_SECONDS)).toBe('0:30');
    expect(clipLength(75)).toBe('1:15');
    expect(clipLength(0.2)).toBe('0:01');
  });
});

describe('a recording in text and in the context estimate', () => {
  it('is a placeholder each before the text for a model that cannot hear', () => {
    expect(withSoundPlaceholders('Listen', 0)).toBe('Listen');
    expect(withSoundPlaceholders('Listen', 2)).toBe('[audio] [audio]\nListen');
    expect(withSoundPlaceholders('', 1)).toBe('[audio]');
  });

  it('costs SOUND_TOKENS of the context each', () => {
    expect(messageTokens({ content: 'hi', sounds: 2 }, 0.5)).toBe(messageTokens({ content: 'hi' }, 0.5) + 2 * SOUND_TOKENS);
  });
});

describe('soundRefusal', () => {
  const list = [textOnly, hearing, atProvider];

  it('lets a local model whose projector hears, and a provider model, take recordings', () => {
    expect(soundRefusal('companion:tiny-audio', list, 'tiny-audio')).toBeNull();
    expect(soundRefusal('companion:cloud/gpt', list, 'cloud/gpt')).toBeNull();
  });

  it('says why a model that cannot hear cannot, and names an installed model that can', () => {
    expect(soundRefusal('companion:tiny', list, 'tiny')).toEqual({
      message:
        'tiny cannot hear recordings: it has no projector with an audio encoder (an mmproj file beside the model). Switch to tiny-audio, which hears sound, or remove the recordings to send the text.',
      alternative: { key: 'companion:tiny-audio', label: 'tiny-audio' },
    });
  });

  it('says why for a model in the browser, an agent and a model the companion does not list', () => {
    expect(soundRefusal('wllama:tiny.gguf', list, 'tiny.gguf')?.message).toMatch(
      /^tiny\.gguf runs in this browser, and models in the browser read text only\./,
    );
    expect(soundRefusal('agent:helper', list, 'Helper')?.message).toMatch(/^Helper is an agent, and the chat sends recordings to models only for now\./);
    expect(soundRefusal('companion:gone', list, 'gone')?.message).toMatch(
      /^gone is not in the companion's list of models, so Hearth cannot tell whether it hears sound\. Switch to tiny-audio/,
    );
  });

  it('says what to install when no model hears, and offers none', () => {
    const refusal = soundRefusal('companion:tiny', [textOnly, model('broken', ['chat', 'audio'], { error: 'failed to load' })], 'tiny');
    expect(refusal?.alternative).toBeNull();
    expect(refusal?.message).toBe(
      'tiny cannot hear recordings: it has no projector with an audio encoder (an mmproj file beside the model). No installed model hears sound: install one whose projector has an audio encoder (such as Voxtral, Ultravox or Qwen2.5-Omni, with its mmproj file beside it) from the Models page, or remove the recordings to send the text.',
    );
  });
});
