import type { ModelTarget } from '../../models/catalog.js';
import type { OllamaContext } from '../contexts.js';

/**
 * An empty request (no messages, no prompt), Ollama's way to load a model ahead of use: a local
 * chat model is loaded, or unloaded with keep_alive 0. A provider's model and an embedding model
 * (loaded on first use) need nothing.
 */
export async function loadOnly(context: Pick<OllamaContext, 'engine'>, target: ModelTarget, unload: boolean): Promise<'load' | 'unload'> {
  if (target.kind !== 'local' || !target.info.capabilities.includes('chat')) return unload ? 'unload' : 'load';
  if (unload) {
    await context.engine.unload(target.info.id);
    return 'unload';
  }
  await context.engine.load(target.info);
  return 'load';
}
