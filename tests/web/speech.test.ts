/**
 * What the chat's microphone does with a recording (web/src/lib/chat/speech.ts): attach it for a
 * chat model that hears, have a model that hears write it down otherwise, or stay off and say why.
 */
import { describe, expect, it } from 'vitest';
import type { ModelRecord } from '#shared/api/openai.js';
import { NO_HEARING_MODEL, speechPlan } from '../../web/src/lib/chat/speech';

const model = (id: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({
  id,
  object: 'model',
  created: 0,
  owned_by: 'local',
  source: 'local',
  capabilities: ['chat'],
  ...extra,
});

const text = model('tiny');
const hears = model('voxtral', { capabilities: ['chat', 'audio'] });
const loadedHears = model('omni', { capabilities: ['chat', 'audio'], loaded: true });

describe('speechPlan', () => {
  it('is off with only text models (and with a broken or provider model that claims audio), saying what to install', () => {
    const broken = model('broken', { capabilities: ['chat', 'audio'], error: 'no file' });
    const provider = model('cloud/whisper', { source: 'provider', capabilities: ['audio'] });
    expect(speechPlan([text, broken, provider], 'tiny', true)).toEqual({ kind: 'off', reason: NO_HEARING_MODEL });
    expect(NO_HEARING_MODEL).toMatch(/none here does\. Install one whose projector has an audio encoder/);
  });

  it('attaches the recording for a chat model that hears when the page can, and has it write it down when not', () => {
    expect(speechPlan([text, hears], 'voxtral', true)).toEqual({ kind: 'attach', model: 'voxtral' });
    expect(speechPlan([text, hears], 'voxtral', false)).toEqual({ kind: 'transcribe', model: 'voxtral' });
  });

  it('has another model write it down for a text model: a loaded one first', () => {
    expect(speechPlan([text, hears], 'tiny', true)).toEqual({ kind: 'transcribe', model: 'voxtral' });
    expect(speechPlan([text, hears, loadedHears], 'tiny', true)).toEqual({ kind: 'transcribe', model: 'omni' });
    expect(speechPlan([text, hears], null, false)).toEqual({ kind: 'transcribe', model: 'voxtral' });
  });
});
