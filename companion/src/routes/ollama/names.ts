import { HearthError } from '../../errors.js';
import type { ModelTarget } from '../../models/catalog.js';
import type { OllamaContext } from '../contexts.js';

/** Ollama's tag for "the default": Hearth ids carry none, so `tiny:latest` is the model `tiny`. */
const LATEST = ':latest';

/**
 * The name Ollama's lists show for a Hearth model id: the id with `:latest` added, as Ollama names
 * every model `name:tag`, unless its last part already has a tag (`qwen3:8b`).
 */
export function ollamaName(id: string): string {
  const last = id.slice(id.lastIndexOf('/') + 1);
  return last.includes(':') ? id : `${id}${LATEST}`;
}

/**
 * The model an Ollama name means, tried in this order: the name as a Hearth id (a local model, or
 * `<provider>/<model>` as the provider lists it); without a trailing `:latest`; an `hf.co/{owner}/{repo}:{quant}` name
 * pulled through POST /api/pull, as the model its download produced. Else Ollama's
 * `model "x" not found` 404, with the ids Hearth does have.
 */
export async function resolveName(context: Pick<OllamaContext, 'catalog' | 'downloads'>, name: string): Promise<ModelTarget> {
  for (const id of candidates(context, name)) {
    try {
      const target = await context.catalog.resolve(id);
      // Any `<provider>/…` resolves to that provider: `:latest` is kept only where the provider lists the name with it.
      if (target.kind === 'provider' && id.endsWith(LATEST)) {
        const listed = (await context.catalog.known()).providerModels;
        if (!listed.includes(id) && listed.includes(stripLatest(id))) return { kind: 'provider', id: stripLatest(id) };
      }
      return target;
    } catch (error) {
      if (!(error instanceof HearthError && error.code === 'model_not_found')) throw error;
    }
  }
  throw new HearthError('model_not_found', `model "${name}" not found. ${await context.catalog.advice(stripLatest(name))}`, { param: 'model' });
}

/** The Hearth id of a resolved target (a provider model's is the name as given). */
export function targetId(target: ModelTarget): string {
  return target.kind === 'local' ? target.info.id : target.id;
}

function candidates(context: Pick<OllamaContext, 'downloads'>, name: string): string[] {
  const ids = [name, stripLatest(name)];
  const pulled = pullSource(name);
  if (pulled) {
    const download = context.downloads
      .list()
      .find((item) => item.status === 'completed' && item.model_id && item.source.toLowerCase() === pulled.toLowerCase());
    if (download?.model_id) ids.push(download.model_id);
  }
  return [...new Set(ids)];
}

function stripLatest(name: string): string {
  return name.endsWith(LATEST) ? name.slice(0, -LATEST.length) : name;
}

/** `hf.co/{owner}/{repo}[:{quant}]` (or huggingface.co/…) as the source Hearth's downloader takes (`owner/repo[:QUANT]`); else null. */
export function pullSource(name: string): string | null {
  const match = /^(?:https?:\/\/)?(?:hf\.co|huggingface\.co)\/([^/\s:]+\/[^/\s:]+)(?::([^/\s:]+))?$/i.exec(name.trim());
  if (!match) return null;
  const [, repo, quant] = match;
  return quant && quant.toLowerCase() !== 'latest' ? `${repo}:${quant.toUpperCase()}` : repo!;
}
