/**
 * A key written twice in one mapping of config.yaml, as happens when a block of the generated
 * file's commented examples is uncommented below the one Hearth wrote: the parser names only
 * the second, so this finds the first and says to merge the two.
 */
import { isMap, isScalar, LineCounter, parseDocument, visit, YAMLParseError } from 'yaml';

/** The first place `key` is written in the mapping where it is written again at `offset`; undefined when none is found. */
export function firstOfDuplicate(text: string, offset: number): { key: string; line: number } | undefined {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { uniqueKeys: false, lineCounter });
  let found: { key: string; line: number } | undefined;
  visit(document, {
    Map(_key, map) {
      if (!isMap(map)) return undefined;
      const keys = map.items.map((pair) => (isScalar(pair.key) ? pair.key : undefined));
      const again = keys.findIndex((key) => key?.range?.[0] === offset);
      if (again < 0) return undefined;
      const first = keys.slice(0, again).find((key) => key?.value === keys[again]!.value);
      if (first?.range) found = { key: String(first.value), line: lineCounter.linePos(first.range[0]).line };
      return visit.BREAK;
    },
  });
  return found;
}

/** The sentence for a duplicated key: both lines, and what to do. */
export function duplicateKeyMessage(key: string, firstLine: number, secondLine: number): string {
  return `"${key}" is written twice in the same place (lines ${firstLine} and ${secondLine}): a key may appear only once. Merge the two into one "${key}:" block (the settings under both, once each), then start again.`;
}

/** For the parser's error about a key written twice: the sentence naming both lines; undefined for any other error. */
export function explainDuplicate(text: string, error: unknown): string | undefined {
  if (!(error instanceof YAMLParseError) || error.code !== 'DUPLICATE_KEY') return undefined;
  const second = error.linePos?.[0]?.line;
  const first = firstOfDuplicate(text, error.pos[0]);
  return first && second ? duplicateKeyMessage(first.key, first.line, second) : undefined;
}
