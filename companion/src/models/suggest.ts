/**
 * What to tell someone who named a model this server does not have: the ids it does have, the
 * one they probably meant (the same letters in another case, or a provider's model without its
 * `<provider>/` prefix), and how model ids are formed.
 */

export interface KnownModels {
  /** Local model ids. */
  local: string[];
  /** `<provider>/<model>` ids the providers listed. */
  providerModels: string[];
  /** Names of the configured providers. */
  providers: string[];
}

/** At most this many ids are named in a message. */
const LISTED = 12;

/** The id meant by `id`, when exactly one known id is the same ignoring case or the provider prefix. */
export function closestModel(id: string, known: KnownModels): string | undefined {
  const all = [...known.local, ...known.providerModels];
  const lower = id.toLowerCase();
  const sameLetters = all.filter((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters.length === 1) return sameLetters[0];
  if (id.includes('/')) return undefined;
  const prefixed = known.providerModels.filter((candidate) => candidate.slice(candidate.indexOf('/') + 1).toLowerCase() === lower);
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** Sentences that follow "The model X does not exist": a suggestion, how ids are formed, the ids there are. */
export function unknownModelAdvice(id: string, known: KnownModels): string {
  const sentences: string[] = [];
  const meant = closestModel(id, known);
  if (meant) sentences.push(`Did you mean "${meant}"?`);
  const slash = id.indexOf('/');
  if (slash > 0) {
    const prefix = id.slice(0, slash);
    if (!known.providers.includes(prefix)) {
      sentences.push(
        known.providers.length > 0
          ? `An id with a slash names a provider's model as <provider>/<model>, and no provider is called "${prefix}" (providers here: ${known.providers.join(', ')}).`
          : `An id with a slash names a provider's model as <provider>/<model>, and no provider is configured. To download "${id}" from Hugging Face instead, use Models → Discover in the app, or: hearth pull ${id}`,
      );
    }
  } else if (!meant && known.providers.length > 0) {
    sentences.push(`Provider models are named <provider>/<model>, for example ${known.providers[0]}/${id}.`);
  }
  const all = [...known.local, ...known.providerModels];
  if (all.length === 0) sentences.push('No models are installed yet.');
  else {
    const more = all.length > LISTED ? `, and ${all.length - LISTED} more` : '';
    sentences.push(`Models here: ${all.slice(0, LISTED).join(', ')}${more}.`);
  }
  return sentences.join(' ');
}
