/**
 * Images attached to a chat message: how large they are kept, which models can be sent them, and
 * what a model that reads text only is given in their place.
 */
import type { AgentRecord } from '#shared/api/agents.js';
import type { ModelRecord } from '#shared/api/openai.js';
import { agentOfKey } from './agent-reply';
import { parseModelKey } from './backends';

/** Longer sides are scaled down to this in the browser before an image is stored or sent. */
export const MAX_SIDE = 2048;
/** A file larger than this is not read at all (a photo is a few MB; decoding much more can take the tab down). */
export const MAX_FILE_BYTES = 50_000_000;
/** What stands for an image in text: what a text-only model and memory get instead of its bytes. */
export const IMAGE_PLACEHOLDER = '[image]';

/** The size an image is kept at: within `max` on its longest side, its shape unchanged. */
export function fitWithin(width: number, height: number, max = MAX_SIDE): { width: number; height: number; scaled: boolean } {
  const longest = Math.max(width, height);
  if (longest <= max) return { width, height, scaled: false };
  const ratio = max / longest;
  return { width: Math.max(1, Math.round(width * ratio)), height: Math.max(1, Math.round(height * ratio)), scaled: true };
}

/** PNG and JPEG are kept as they are (JPEG for a photo, PNG for the rest); any other format is stored as PNG. */
export function storedType(type: string): 'image/png' | 'image/jpeg' {
  return type === 'image/jpeg' || type === 'image/jpg' ? 'image/jpeg' : 'image/png';
}

/** A message's text as a model without eyes (or memory) gets it: a placeholder (`mark`) for each image, then the text. */
export function withPlaceholders(text: string, images: number, mark = IMAGE_PLACEHOLDER): string {
  if (images === 0) return text;
  const marks = Array.from({ length: images }, () => mark).join(' ');
  return text ? `${marks}\n${text}` : marks;
}

/** The companion's models that read images (a projector beside them). */
export function imageReaders(list: readonly ModelRecord[]): ModelRecord[] {
  return list.filter((model) => model.capabilities?.includes('vision') && !model.error);
}

export interface ImageRefusal {
  /** Why the images cannot go to this model, and what to do, in words. */
  message: string;
  /** An installed model that reads images (to switch to), when there is one. */
  alternative: { key: string; label: string } | null;
}

const NO_PROJECTOR = 'it has no vision projector (an mmproj file beside the model)';

/** A model of the companion's list that takes images: one with a projector, or a provider's (which gets them as sent). */
const reads = (record: ModelRecord) => record.source === 'provider' || !!record.capabilities?.includes('vision');

/**
 * Whether the model with this key (`companion:…`, `wllama:…`, `webllm:…`, `agent:…`) can be sent
 * images: null when it can (a local model with a projector; a provider's model, which gets them as
 * sent; an agent of this machine's whose model is one of those, found in `agentList`), else why
 * not and which installed model can.
 */
export function imageRefusal(key: string, list: readonly ModelRecord[], label: string, agentList: readonly AgentRecord[] = []): ImageRefusal | null {
  const agentId = agentOfKey(key);
  if (agentId)
    return agentRefusal(
      agentList.find((agent) => agent.id === agentId),
      list,
      label,
    );
  const ref = parseModelKey(key);
  const record = ref?.runtime === 'companion' ? list.find((model) => model.id === ref.id) : undefined;
  if (record && reads(record)) return null;
  if (ref && ref.runtime !== 'companion') return refusal(`${label} runs in this browser, and models in the browser read text only.`, list, key);
  if (!record) return refusal(`${label} is not in the companion's list of models, so Hearth cannot tell whether it reads images.`, list, key);
  return refusal(`${label} cannot read images: ${NO_PROJECTOR}.`, list, key);
}

/**
 * Whether an agent can be sent images: one of this machine's whose model reads them can (its run
 * gets them); for any other, why not, in the agent's name and its model's.
 */
function agentRefusal(agent: AgentRecord | undefined, list: readonly ModelRecord[], label: string): ImageRefusal | null {
  if (!agent) return refusal(`${label} is not in the companion's list of agents, so Hearth cannot tell whether its model reads images.`, list);
  if (agent.source === 'cloud') return refusal(`${label} runs in a cloud workspace, which is sent the text of a message only.`, list);
  if (agent.source === 'remote')
    return refusal(`${label} runs on a paired host, whose models this app cannot see, so Hearth cannot tell whether they read images.`, list);
  // A local agent's model is the owner's to change: that is a way out too.
  if (!agent.model) return refusal(`${label} has no model set, so nothing would read the images.`, list, '', label);
  const record = list.find((model) => model.id === agent.model);
  if (record && reads(record)) return null;
  const why = record
    ? `${label} runs on ${agent.model}, which cannot read images: ${NO_PROJECTOR}.`
    : `${label} runs on ${agent.model}, which is not in the companion's list of models, so Hearth cannot tell whether it reads images.`;
  return refusal(why, list, '', label);
}

/**
 * The refusal: why, then an installed model that reads images to switch to (not `key` itself), or
 * how to get one; for the local agent `agent`, also giving it such a model.
 */
function refusal(why: string, list: readonly ModelRecord[], key = '', agent?: string): ImageRefusal {
  const reader = imageReaders(list).find((model) => `companion:${model.id}` !== key);
  if (reader)
    return {
      message: `${why} ${agent ? `Give ${agent} a model that reads images on the Agents page, switch` : 'Switch'} to ${reader.id}, which reads images, or remove the images to send the text.`,
      alternative: { key: `companion:${reader.id}`, label: reader.id },
    };
  return {
    message: `${why} No installed model reads images: install a vision model with its projector (an mmproj-*.gguf file beside the model, as Gemma 3, Qwen2.5-VL and SmolVLM have) from the Models page${agent ? ` and give it to ${agent} on the Agents page` : ''}, or remove the images to send the text.`,
    alternative: null,
  };
}
