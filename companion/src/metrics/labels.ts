/**
 * Label values for model ids, bounded: a model id becomes a label only once it is known to be a
 * real model, and only the first MODEL_LABEL_LIMIT of each kind; anything else is counted as
 * `other`. A local model is known when it is one of this machine's models or Hearth served it; a
 * provider model only when its provider lists it or the configuration names it (a provider may
 * answer 200 for any name, and the name may be a user's note). Local and provider models have a
 * limit each, so a provider listing hundreds of models leaves the local ones their labels. So a
 * client sending made-up model names can neither fill the metrics with series nor put its own
 * text in them. Labels carry model ids and route families only: never prompts, keys or what a
 * user typed.
 */

export const MODEL_LABEL_LIMIT = 100;
export const OTHER = 'other';
const MAX_LENGTH = 200;

/** Where a known model runs; undefined: not known to be a model. */
export type ModelKind = 'local' | 'provider' | undefined;

export class ModelLabels {
  private readonly admitted = { local: new Set<string>(), provider: new Set<string>() };

  constructor(private readonly limit = MODEL_LABEL_LIMIT) {}

  /** The label for a model id of the given kind. Unknown or past its kind's limit: `other`; no model at all: "". */
  label(id: string | undefined, kind: ModelKind): string {
    if (id === undefined || id === '') return '';
    if (this.admitted.local.has(id) || this.admitted.provider.has(id)) return id;
    if (kind === undefined || id.length > MAX_LENGTH) return OTHER;
    const admitted = this.admitted[kind];
    if (admitted.size >= this.limit) return OTHER;
    admitted.add(id);
    return id;
  }
}
