import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type { Capability, ModelRecord } from '#shared/api/openai.js';
import type { OllamaModel, OllamaModelDetails } from '#shared/api/ollama.js';
import type { LocalModel } from '../../models/types.js';
import { quantizationOf } from '../../models/hub.js';
import { ollamaName } from './names.js';

/** Hearth's capabilities in Ollama's words; a Hearth capability Ollama has no word for is left out. */
const CAPABILITY_WORDS: Partial<Record<Capability, string>> = {
  chat: 'completion',
  completion: 'completion',
  tools: 'tools',
  vision: 'vision',
  reasoning: 'thinking',
  embedding: 'embedding',
  fim: 'insert',
};

export function ollamaCapabilities(capabilities: readonly Capability[]): string[] {
  return [...new Set(capabilities.flatMap((capability) => CAPABILITY_WORDS[capability] ?? []))];
}

/** A provider's model: what its chat-completions API offers (its real abilities are the provider's to know). */
export const PROVIDER_CAPABILITIES: Capability[] = ['chat', 'tools'];

export function detailsOf(local: LocalModel | undefined, record?: ModelRecord): OllamaModelDetails {
  const family = local?.architecture ?? '';
  return {
    parent_model: '',
    format: 'gguf',
    family,
    families: family ? [family] : [],
    parameter_size: '',
    quantization_level: (local ? quantizationOf(local.path) : record?.quantization) ?? '',
  };
}

/**
 * A model as Ollama lists it. The digest stands for the file (its id, path and size hashed): it
 * changes when the file does, as Ollama's manifest digest does, without reading gigabytes.
 */
export function ollamaModel(id: string, local: LocalModel | undefined, record?: ModelRecord): OllamaModel {
  return {
    name: ollamaName(id),
    model: ollamaName(id),
    modified_at: modifiedAt(local),
    size: local?.sizeBytes ?? 0,
    digest: createHash('sha256')
      .update(`${id}\0${local?.path ?? ''}\0${local?.sizeBytes ?? 0}`)
      .digest('hex'),
    details: detailsOf(local, record),
  };
}

function modifiedAt(local: LocalModel | undefined): string {
  if (!local) return new Date(0).toISOString();
  try {
    return statSync(local.path).mtime.toISOString();
  } catch {
    return new Date(0).toISOString();
  }
}
