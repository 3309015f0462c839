import type { ConfigDocument } from '#shared/api/config.js';
import { isObject } from '../json.js';

/** Sections that are lists of named items, and the field that names an item. */
export const NAMED_LISTS: Record<string, string> = {
  providers: 'name',
  mcp_services: 'name',
  agents: 'id',
  media_providers: 'name',
  remote_hosts: 'name',
  cloud_workspaces: 'name',
};

type Json = Record<string, unknown>;

/**
 * The document a change asks for. Without prune it is merged into the current one: object
 * sections deep-merge (a null inside one removes that key, so it goes back to its default),
 * named list items are created or replaced, nothing is deleted. With
 * prune the change is the whole truth: what it does not mention goes back to its default or
 * is deleted.
 */
export function desiredDocument(current: ConfigDocument, incoming: Json, prune: boolean): Json {
  if (prune) return structuredClone(incoming);
  const result = structuredClone(current) as unknown as Json;
  for (const [section, value] of Object.entries(incoming)) {
    const key = NAMED_LISTS[section];
    if (key && Array.isArray(value) && Array.isArray(result[section])) {
      const merged = [...(result[section] as Json[])];
      for (const item of value as Json[]) {
        const index = merged.findIndex((existing) => existing[key] === item?.[key]);
        if (index >= 0) merged[index] = item;
        else merged.push(item);
      }
      result[section] = merged;
    } else {
      result[section] = deepMerge(result[section], value);
    }
  }
  return result;
}

/** A JSON merge patch (RFC 7396) below a section: objects merge, a null removes its key (back to the default). */
function deepMerge(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Json = isObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = deepMerge(out[key], value);
  }
  return out;
}

/** Leaf paths whose values differ between two values (`a.b`, `list[2]` as a whole for arrays). */
export function changedFields(before: unknown, after: unknown, prefix = ''): string[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => changedFields(before[key], after[key], prefix ? `${prefix}.${key}` : key));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [prefix];
}
