import { closestModel } from '../models/suggest.js';
import { isObject } from '../json.js';

/** A place in the configuration that names a model: agents' models, memory's models, and models' own load settings. */
export interface ModelReference {
  path: string;
  /** Who uses it, in words: `the agent "helper"`, `memory`. */
  user: string;
  model: string;
}

/** Every model the document names, with where (tolerant of a document whose shape is still wrong). */
export function modelReferences(document: Record<string, unknown>): ModelReference[] {
  const agents = Array.isArray(document.agents) ? (document.agents as unknown[]) : [];
  const memory = isObject(document.memory) ? document.memory : {};
  const references: ModelReference[] = [];
  agents.forEach((agent, index) => {
    if (isObject(agent) && typeof agent.model === 'string')
      references.push({ path: `agents[${index}].model`, user: `the agent "${String(agent.id)}"`, model: agent.model });
  });
  if (typeof memory.model === 'string') references.push({ path: 'memory.model', user: 'memory', model: memory.model });
  if (typeof memory.embedding_model === 'string') references.push({ path: 'memory.embedding_model', user: 'memory search', model: memory.embedding_model });
  const models = isObject(document.models) ? document.models : {};
  if (isObject(models.overrides))
    for (const id of Object.keys(models.overrides))
      if (!id.includes('/')) references.push({ path: `models.overrides.${id}`, user: 'the load settings entry', model: id });
  return references;
}

/**
 * Warnings for references to local models that are not installed (a `<provider>/<model>` is the
 * provider's to judge). Such a configuration is valid, since the model may be added later, but
 * what uses it fails until then.
 */
export function missingModelWarnings(document: Record<string, unknown>, localModels: Iterable<string>): string[] {
  const local = [...localModels];
  return modelReferences(document)
    .filter((reference) => !reference.model.includes('/') && !local.includes(reference.model))
    .map((reference) => {
      const meant = closestModel(reference.model, { local, providerModels: [], providers: [] });
      return `${reference.path}: ${reference.user} uses the model "${reference.model}", which is not installed${meant ? ` (did you mean "${meant}"?)` : ''}; it fails until that model is in a models folder (Models → Discover in the app downloads one).`;
    });
}
