/**
 * Agents' settings and tools in the words a person uses (web/README.md's glossary): a tool's name
 * as words, the tool policy as sentences, a tool call's arguments as labelled fields.
 */
import type { ToolApproval, ToolClass } from '#shared/api/config.js';

/** `write_file` → "Write file", `notes_search_notes` → "Notes search notes": the name as words. */
export function toolLabel(name: string): string {
  const words = name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim()
    .toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}

const POLICY: Record<ToolClass, Record<ToolApproval, string>> = {
  read: { auto: 'reads on its own', ask: 'asks before reading', deny: 'never reads' },
  write: { auto: 'changes files on its own', ask: 'asks before changing files', deny: 'never changes files' },
  exec: { auto: 'runs commands on its own', ask: 'asks before running commands', deny: 'never runs commands' },
  network: { auto: 'goes online on its own', ask: 'asks before going online', deny: 'never goes online' },
};

/** `{ read: 'auto', write: 'ask' }` → "Reads on its own, asks before changing files". */
export function policySentence(policy: Partial<Record<ToolClass, ToolApproval>>): string {
  const parts = (Object.keys(POLICY) as ToolClass[]).flatMap((kind) => (policy[kind] ? [POLICY[kind][policy[kind]]] : []));
  const text = parts.join(', ');
  return text ? text[0]!.toUpperCase() + text.slice(1) : '';
}

export interface ArgumentField {
  label: string;
  /** The value as text: a string as it is, anything else as JSON. */
  text: string;
  /** Too long or on several lines: shown folded, its first line as the summary. */
  long: boolean;
}

const LONG = 120;

/** A tool call's arguments (JSON text) as labelled fields; null when they are not a JSON object (shown as they are). */
export function argumentFields(json: string): ArgumentField[] | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return Object.entries(value as Record<string, unknown>).map(([key, item]) => {
    const text = typeof item === 'string' ? item : JSON.stringify(item, null, 2);
    return { label: toolLabel(key), text, long: text.length > LONG || text.includes('\n') };
  });
}
