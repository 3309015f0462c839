/**
 * Label values for model ids, bounded: a model id becomes a label only once it is known to be a
 * real model (a request for it succeeded, or it is one of this machine's models), and only the
 * first MODEL_LABEL_LIMIT of them; anything else is counted as `other`. So a client sending
 * made-up model names can neither fill the metrics with series nor put its own text in them.
 * Labels carry model ids and route families only: never prompts, keys or what a user typed.
 */

export const MODEL_LABEL_LIMIT = 100;
export const OTHER = 'other';
const MAX_LENGTH = 200;

export class ModelLabels {
  private readonly admitted = new Set<string>();

  constructor(private readonly limit = MODEL_LABEL_LIMIT) {}

  /**
   * The label for a model id: `known` says the id names a real model (a successful request, a
   * local model, a loaded one). Unknown or past the limit: `other`; no model at all: "".
   */
  label(id: string | undefined, known: boolean): string {
    if (id === undefined || id === '') return '';
    if (this.admitted.has(id)) return id;
    if (!known || id.length > MAX_LENGTH || this.admitted.size >= this.limit) return OTHER;
    this.admitted.add(id);
    return id;
  }
}
