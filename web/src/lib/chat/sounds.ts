/**
 * Recordings attached to a chat message (the microphone's 16 kHz mono WAV, for a model that takes
 * sound): how long one may be, how long one is, which models can be sent them, how a request
 * carries them, and what a model that cannot hear gets in their place.
 */
import type { ModelRecord } from '#shared/api/openai.js';
import type { MessageSound } from '$lib/storage/conversations';
import { dataUrlOf, readMedia } from '$lib/storage/media';
import { agentOfKey } from './agent-reply';
import { withPlaceholders, type ImageRefusal } from './attachments';
import { parseModelKey, type GenerateMessage } from './backends';
import { hearingModels } from './speech';

/**
 * A recording to attach stops by itself after this long. Audio projectors hear in 30-second
 * windows (Whisper's encoder): a longer clip costs a second window of tokens, and a clip is sent
 * again with every later question of its conversation. 30 s of WAV is about 1 MB, so several
 * clips stay well within the companion's body limit.
 */
export const MAX_CLIP_SECONDS = 30;
/** What stands for a recording in text: what a model that cannot hear gets instead of its bytes. */
export const SOUND_PLACEHOLDER = '[audio]';

/** Why recordings cannot go to a model, and which model can take them (the shape images' refusal has). */
export type SoundRefusal = ImageRefusal;

/** How long a WAV file plays, in seconds (its data chunk over its byte rate); 0 when it is not one. */
export function wavSeconds(wav: Uint8Array): number {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (at: number) => String.fromCharCode(...wav.subarray(at, at + 4));
  if (wav.byteLength < 44 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return 0;
  let byteRate = 0;
  for (let at = 12; at + 8 <= wav.byteLength;) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ' && at + 16 <= wav.byteLength) byteRate = view.getUint32(at + 16, true);
    if (tag(at) === 'data') return byteRate > 0 ? Math.min(size, wav.byteLength - at - 8) / byteRate : 0;
    at += 8 + size + (size % 2);
  }
  return 0;
}

/** A clip's length as the chip shows it: `0:07` (at least a second: a short clip is not nothing). */
export function clipLength(seconds: number): string {
  const whole = Math.max(1, Math.round(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** A message's text as a model that cannot hear gets it: a placeholder for each recording, then the text. */
export function withSoundPlaceholders(text: string, sounds: number): string {
  return withPlaceholders(text, sounds, SOUND_PLACEHOLDER);
}

/**
 * A message of a request with its question's recordings: their bytes (base64 WAV) to a model that
 * hears (`hears`), else (and for a recording no longer stored) a placeholder in the text for each.
 */
export async function withSounds(message: GenerateMessage, sounds: readonly MessageSound[], hears: boolean): Promise<GenerateMessage> {
  if (sounds.length === 0) return message;
  if (!hears) return { ...message, content: withSoundPlaceholders(message.content, sounds.length) };
  const blobs = await Promise.all(sounds.map((sound) => readMedia(sound.id)));
  const urls = await Promise.all(blobs.filter((blob) => blob !== null).map(dataUrlOf));
  const data = urls.map((url) => url.slice(url.indexOf(',') + 1));
  return { ...message, content: withSoundPlaceholders(message.content, sounds.length - data.length), ...(data.length ? { sounds: data } : {}) };
}

/**
 * Whether the model with this key (`companion:…`, `wllama:…`, `webllm:…`, `agent:…`) can be sent
 * recordings: null when it can (a local model whose projector has an audio encoder; a provider's
 * model, which gets them as sent), else why not and which installed model can.
 */
export function soundRefusal(key: string, list: readonly ModelRecord[], label: string): SoundRefusal | null {
  const ref = parseModelKey(key);
  const record = ref?.runtime === 'companion' ? list.find((model) => model.id === ref.id) : undefined;
  if (record && (record.source === 'provider' || record.capabilities?.includes('audio'))) return null;
  let why: string;
  if (agentOfKey(key)) why = `${label} is an agent, and the chat sends recordings to models only for now.`;
  else if (ref && ref.runtime !== 'companion') why = `${label} runs in this browser, and models in the browser read text only.`;
  else if (!record) why = `${label} is not in the companion's list of models, so Hearth cannot tell whether it hears sound.`;
  else why = `${label} cannot hear recordings: it has no projector with an audio encoder (an mmproj file beside the model).`;
  const listener = hearingModels(list).find((model) => `companion:${model.id}` !== key);
  if (listener)
    return {
      message: `${why} Switch to ${listener.id}, which hears sound, or remove the recordings to send the text.`,
      alternative: { key: `companion:${listener.id}`, label: listener.id },
    };
  return {
    message: `${why} No installed model hears sound: install one whose projector has an audio encoder (such as Voxtral, Ultravox or Qwen2.5-Omni, with its mmproj file beside it) from the Models page, or remove the recordings to send the text.`,
    alternative: null,
  };
}
