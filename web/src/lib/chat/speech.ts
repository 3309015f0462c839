/** What the chat's microphone does with a recording, by the models the companion lists. */
import type { ModelRecord } from '#shared/api/openai.js';

export type SpeechPlan =
  /** The chat's model takes sound: the recording goes to the message as it is. */
  | { kind: 'attach'; model: string }
  /** `model` writes down what was said, and the words go into the message box. */
  | { kind: 'transcribe'; model: string }
  /** No model here takes sound: why, in words. */
  | { kind: 'off'; reason: string };

/** The companion's own models that take sound (a projector with an audio encoder beside them). */
export function hearingModels(list: readonly ModelRecord[]): ModelRecord[] {
  return list.filter((model) => model.source !== 'provider' && !model.error && (model.capabilities ?? []).includes('audio'));
}

export const NO_HEARING_MODEL =
  'Speaking needs a model that takes sound, and none here does. Install one whose projector has an audio encoder (such as Voxtral, Ultravox or Qwen2.5-Omni, with its mmproj file beside it) and the microphone turns on.';

/**
 * The plan for a recording: attached when the chat's model (`chosen`, a companion model id) takes
 * sound and the page can attach it (`canAttach`); else written down by the chat's model when it
 * takes sound, else by a loaded model that does, else by the first; off when none does.
 */
export function speechPlan(list: readonly ModelRecord[], chosen: string | null, canAttach: boolean): SpeechPlan {
  const hearing = hearingModels(list);
  const own = hearing.find((model) => model.id === chosen);
  if (own && canAttach) return { kind: 'attach', model: own.id };
  const model = own ?? hearing.find((entry) => entry.loaded) ?? hearing[0];
  return model ? { kind: 'transcribe', model: model.id } : { kind: 'off', reason: NO_HEARING_MODEL };
}
