import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { isObject } from '../json.js';

/**
 * Keys that were once spelled in camelCase. The old spellings are still read, each with one
 * warning naming the new key, so a configuration written for an earlier Hearth keeps working.
 * Retired keys (below) are dropped the same way, with a warning naming what replaced them.
 */
const RENAMED: { section: string; list: boolean; keys: Record<string, string> }[] = [
  {
    section: 'memory',
    list: false,
    keys: {
      memoryBudgetTokens: 'memory_budget_tokens',
      summaryDebounceSeconds: 'summary_debounce_seconds',
      consolidationIntervalHours: 'consolidation_interval_hours',
      salienceFloor: 'salience_floor',
      episodeRetentionDays: 'episode_retention_days',
    },
  },
  {
    section: 'mcp_services',
    list: true,
    keys: { autoConnect: 'auto_connect', discoveryTimeoutMs: 'discovery_timeout_ms', toolCallTimeoutMs: 'tool_call_timeout_ms' },
  },
];

/** Keys that no longer do anything: dropped with one warning saying where the setting lives now. */
const RETIRED: { path: string[]; key: string; instead: string }[] = [
  { path: ['images', 'hosted'], key: 'base_url', instead: 'a hosted media endpoint is media_providers[].base_url' },
  { path: ['images', 'hosted'], key: 'api_key', instead: 'a hosted media key is media_providers[].api_key' },
];

type Json = Record<string, unknown>;

function retiredHolder(document: Json, path: string[]): Json | undefined {
  let value: unknown = document;
  for (const part of path) value = isObject(value) ? value[part] : undefined;
  return isObject(value) ? value : undefined;
}

/** Each object that may hold old spellings, with the path warnings name it by. */
function holders(document: Json): { path: string; holder: Json; keys: Record<string, string> }[] {
  return RENAMED.flatMap(({ section, list, keys }) => {
    const value = document[section];
    if (!list) return isObject(value) ? [{ path: section, holder: value, keys }] : [];
    if (!Array.isArray(value)) return [];
    return value.flatMap((item, index) => (isObject(item) ? [{ path: `${section}[${index}]`, holder: item, keys }] : []));
  });
}

function warning(path: string, old: string, key: string, both: boolean): string {
  return both
    ? `${path}.${old} is ignored: ${path}.${key}, its new spelling, is also set. Remove ${old}.`
    : `${path}.${old} is now spelled ${path}.${key}; the old spelling still works for now. Rename it.`;
}

/**
 * Renames old spellings in a parsed document (in place) and returns one warning per renamed key.
 * When both spellings are present the new one wins.
 */
export function renameLegacyKeys(document: unknown): string[] {
  if (!isObject(document)) return [];
  const warnings: string[] = [];
  for (const { path, holder, keys } of holders(document)) {
    for (const [old, key] of Object.entries(keys)) {
      if (!(old in holder)) continue;
      const both = key in holder;
      warnings.push(warning(path, old, key, both));
      if (!both) holder[key] = holder[old];
      delete holder[old];
    }
  }
  for (const { path, key, instead } of RETIRED) {
    const holder = retiredHolder(document, path);
    if (!holder || !(key in holder)) continue;
    warnings.push(`${path.join('.')}.${key} is no longer used and is ignored: ${instead}. Remove it.`);
    delete holder[key];
  }
  return warnings;
}

/** The same renaming on a YAML document, keeping every comment and the layout around the keys. */
export function renameLegacyKeysInYaml(document: Document): void {
  for (const { section, list, keys } of RENAMED) {
    const node = document.get(section, true);
    const maps = list ? (isSeq(node) ? node.items : []) : [node];
    for (const map of maps) {
      if (!isMap(map)) continue;
      for (const pair of [...map.items]) {
        const name = isScalar(pair.key) ? pair.key.value : pair.key;
        if (typeof name !== 'string' || !(name in keys)) continue;
        const key = keys[name]!;
        if (map.has(key)) map.delete(name);
        else if (isScalar(pair.key)) pair.key.value = key;
      }
    }
  }
  for (const { path, key } of RETIRED) if (document.hasIn([...path, key])) document.deleteIn([...path, key]);
}
