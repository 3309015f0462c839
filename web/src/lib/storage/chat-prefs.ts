/**
 * What the chat keeps in this browser's localStorage beside the conversations (IndexedDB): the
 * unsent text of each conversation, and the model the last one was started with.
 */
const DRAFTS_KEY = 'hearth.drafts';
const MODEL_KEY = 'hearth.model';

function readJson<T>(key: string, fallback: T): T {
  try {
    const text = globalThis.localStorage?.getItem(key);
    return text ? (JSON.parse(text) as T) : fallback;
  } catch {
    return fallback;
  }
}

/** Unsent text by conversation id ("(new)" before a conversation exists). */
export const readDrafts = (): Record<string, string> => readJson(DRAFTS_KEY, {});
export const saveDrafts = (drafts: Record<string, string>): void => globalThis.localStorage?.setItem(DRAFTS_KEY, JSON.stringify(drafts));

/** The model key (or `agent:<id>`) a new conversation starts with. */
export const readModel = (): string => readJson(MODEL_KEY, '');
export const saveModel = (key: string): void => globalThis.localStorage?.setItem(MODEL_KEY, JSON.stringify(key));
