/** Conversations kept in IndexedDB: the history survives reloads, offline and a stopped companion. */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

export interface ChatSettings {
  systemPrompt: string;
  temperature: number | null;
  topP: number | null;
  maxTokens: number | null;
}

export interface MessageStats {
  promptTokens: number | null;
  completionTokens: number | null;
  tokensPerSecond: number | null;
  durationMs: number | null;
}

export type MessageStatus = 'streaming' | 'done' | 'stopped' | 'interrupted' | 'error';

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: number;
  /** The model key (see models store) that wrote an assistant message. */
  model?: string;
  status?: MessageStatus;
  error?: string;
  finishReason?: string | null;
  stats?: MessageStats;
}

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  model: string;
  settings: ChatSettings;
  messages: StoredMessage[];
}

interface HearthDb extends DBSchema {
  conversations: { key: string; value: Conversation; indexes: { updatedAt: number } };
}

export const DEFAULT_SETTINGS: ChatSettings = { systemPrompt: '', temperature: null, topP: null, maxTokens: null };

let database: Promise<IDBPDatabase<HearthDb>> | null = null;

function db(): Promise<IDBPDatabase<HearthDb>> {
  database ??= openDB<HearthDb>('hearth', 1, {
    upgrade(upgrade) {
      const store = upgrade.createObjectStore('conversations', { keyPath: 'id' });
      store.createIndex('updatedAt', 'updatedAt');
    },
    blocking() {
      // A newer version of the app wants to upgrade: let it.
      void database?.then((open) => open.close());
      database = null;
    },
  });
  return database;
}

/** Newest first. */
export async function listConversations(): Promise<Conversation[]> {
  return (await (await db()).getAllFromIndex('conversations', 'updatedAt')).reverse();
}

export async function saveConversation(conversation: Conversation): Promise<void> {
  await (await db()).put('conversations', conversation);
}

export async function deleteConversation(id: string): Promise<void> {
  await (await db()).delete('conversations', id);
}

export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID()}`;
}
