import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parse, parseDocument, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import type { ConfigDocument } from '#shared/api/config.js';
import { checkDocument } from './document.js';
import { renameLegacyKeys, renameLegacyKeysInYaml } from './legacy-keys.js';
import { isObject } from '../json.js';
import { NAMED_LISTS } from './merge.js';

type Json = Record<string, unknown>;

/**
 * Edits the text of `config.yaml` so that it loads as `target`, changing only what differs: the
 * user's comments, order and layout stay, keys left at their defaults are not written out, and
 * old spellings of renamed keys get their new names. Answers undefined when the text cannot be
 * edited that way (it is not valid YAML, or not a mapping); the caller then writes it whole.
 */
export function editConfigText(text: string, target: ConfigDocument): string | undefined {
  const document = parseDocument(text);
  if (document.errors.length > 0) return undefined;
  if (document.contents === null) document.contents = document.createNode({}) as unknown as typeof document.contents;
  if (!isMap(document.contents)) return undefined;
  renameLegacyKeysInYaml(document);
  const effective = checkDocument(document.toJS()).document as Json | undefined;
  syncMap(document, document.contents, target as unknown as Json, effective, '');
  const edited = document.toString();
  return loadsAs(edited, target) ? edited : undefined;
}

function loadsAs(text: string, target: ConfigDocument): boolean {
  const parsed: unknown = parse(text);
  renameLegacyKeys(parsed);
  return isDeepStrictEqual(checkDocument(parsed).document, target);
}

function valueOf(node: unknown): unknown {
  if (isScalar(node)) return node.value;
  return (node as { toJSON?: () => unknown } | null)?.toJSON?.() ?? node;
}

/**
 * Makes `map` describe `target`. `effective` is what the map loads as today, defaults filled in:
 * a key the map lacks is written only when its effective (default) value is not the one wanted.
 */
function syncMap(document: Document, map: YAMLMap, target: Json, effective: Json | undefined, section: string): void {
  for (const pair of [...map.items]) {
    const key = valueOf(pair.key);
    if (typeof key !== 'string' || !(key in target)) map.delete(pair.key);
  }
  for (const [key, value] of Object.entries(target)) {
    const node = map.get(key, true);
    const before = effective?.[key];
    if (node === undefined && isDeepStrictEqual(before, value)) continue;
    if (node !== undefined && isDeepStrictEqual(valueOf(node), value)) continue;
    const named = section === '' && key in NAMED_LISTS && Array.isArray(value);
    if (isObject(value) && (node === undefined || isMap(node))) {
      const child = (node ?? document.createNode({})) as YAMLMap;
      syncMap(document, child, value, isObject(before) ? before : undefined, key);
      if (node === undefined && child.items.length > 0) map.set(key, child);
    } else if (named && (node === undefined || isSeq(node))) {
      const child = (node ?? document.createNode([])) as YAMLSeq;
      syncList(document, child, value as Json[], Array.isArray(before) ? (before as Json[]) : [], key);
      if (node === undefined) map.set(key, child);
    } else if (isScalar(node) && !isObject(value) && !Array.isArray(value)) node.value = value;
    else map.set(key, document.createNode(value));
  }
}

/** A list of named items (providers, agents, mcp_services): items are matched by name and edited in place. */
function syncList(document: Document, list: YAMLSeq, target: Json[], effective: Json[], section: string): void {
  const nameKey = NAMED_LISTS[section]!;
  const nameOf = (node: unknown) => (isMap(node) ? valueOf(node.get(nameKey, true)) : undefined);
  const wanted = new Set(target.map((item) => item[nameKey]));
  list.items = list.items.filter((node) => wanted.has(nameOf(node)));
  for (const item of target) {
    const node = list.items.find((existing) => nameOf(existing) === item[nameKey]);
    const before = effective.find((existing) => existing[nameKey] === item[nameKey]);
    if (isMap(node)) syncMap(document, node, item, before, section);
    else list.items.push(document.createNode(withoutDefaults(section, item)));
  }
}

/** A new list item as a person would write it: the keys that only repeat their default are left out. */
function withoutDefaults(section: string, item: Json): Json {
  const expand = (candidate: Json) => (checkDocument({ version: 1, [section]: [candidate] }).document as unknown as Json | undefined)?.[section];
  const sparse = { ...item };
  for (const key of Object.keys(item)) {
    const { [key]: _dropped, ...rest } = sparse;
    if (isDeepStrictEqual(expand(rest), [item])) delete sparse[key];
  }
  return sparse;
}
