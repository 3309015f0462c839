/** Text helpers shared by search, recall and extraction: query terms, token estimates, rendering. */

/** Function words that carry no topic; removed from queries before lexical search. */
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by can
  could did do does doing done down during each either else ever few for from further get gets got had has have having he her here
  hers herself him himself his how i if in into is it its itself just let lets like may me might more most much must my myself
  neither no nor not now of off on once one only or other others our ours ourselves out over own per quite rather same shall she
  should since so some such than that the their theirs them themselves then there these they this those though through thus to too
  under until up upon us very via was we were what whatever when whenever where whether which while who whom whose why will with
  within without would yet you your yours yourself yourselves kind type sort many`.split(/\s+/),
);

/** Distinct content words of a query, lowercased, possessives and apostrophes removed. */
export function queryTerms(query: string): string[] {
  const words = query
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^\p{L}\p{N}']+/u)
    .map((word) => word.replace(/'s$/, '').replace(/'/g, ''))
    .filter((word) => word.length > 0 && !STOPWORDS.has(word));
  return [...new Set(words)].slice(0, 32);
}

/** An FTS5 MATCH expression: any of the terms (each quoted, so no term is read as an operator). */
export function matchExpression(terms: string[]): string | undefined {
  if (terms.length === 0) return undefined;
  return terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(' OR ');
}

/** Tokens a text spends of a budget: ceil(characters / 4), the estimate the benchmark scorer uses too. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const NAMED_SPEAKER = /^[^\n:]{1,40}:\s/;

/**
 * One line per side of a turn. A side that already names its speaker ("Ann: ...") is kept as
 * it is; otherwise it is labelled user/assistant. An empty side is left out.
 */
export function turnLines(user: string, assistant: string): string[] {
  const lines: string[] = [];
  if (user.trim()) lines.push(NAMED_SPEAKER.test(user) ? user : `user: ${user}`);
  if (assistant.trim()) lines.push(NAMED_SPEAKER.test(assistant) ? assistant : `assistant: ${assistant}`);
  return lines;
}

/** The day of an ISO 8601 date or date-time, or of an epoch time: `YYYY-MM-DD`. */
export function dayOf(date: string | null | undefined, fallbackTime: number): string {
  if (date && /^\d{4}-\d{2}-\d{2}/.test(date)) return date.slice(0, 10);
  return new Date(fallbackTime).toISOString().slice(0, 10);
}

/** Lowercased words with light suffix folding, for comparing short texts (duplicate facts, similar episodes). */
export function wordSet(text: string): Set<string> {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 && !STOPWORDS.has(word));
  return new Set(words.map(fold));
}

/** A light English suffix folding: live, lives, lived, living -> liv; stories -> story. */
function fold(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  let stem = word;
  if (/(sses|xes|zes|ches|shes)$/.test(stem)) stem = stem.slice(0, -2);
  else if (stem.endsWith('s') && !/(ss|us|is)$/.test(stem)) stem = stem.slice(0, -1);
  if (stem.endsWith('ing') && stem.length > 5) stem = stem.slice(0, -3);
  else if (stem.endsWith('ed') && stem.length > 4) stem = stem.slice(0, -2);
  return stem.length > 3 && stem.endsWith('e') ? stem.slice(0, -1) : stem;
}

/** Jaccard similarity of two word sets (0 when both are empty). */
export function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}
