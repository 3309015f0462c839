/** Conversations kept in IndexedDB: the history survives reloads, offline and a stopped companion. */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { DEFAULT_OVERFLOW, type OverflowPolicy } from '$lib/chat/context';
import type { StepView } from '$lib/stores/agent-runs';

export interface ChatSettings {
  systemPrompt: string;
  temperature: number | null;
  topP: number | null;
  maxTokens: number | null;
  /** What happens when the conversation outgrows the model's context. */
  overflow: OverflowPolicy;
  /** A reasoning model thinks before it answers (off: it is asked not to). */
  thinking: boolean;
}

export interface MessageStats {
  promptTokens: number | null;
  completionTokens: number | null;
  tokensPerSecond: number | null;
  durationMs: number | null;
  /** Characters of the messages the request sent: with promptTokens, how this model counts. */
  promptChars?: number;
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
  /** On a reply: the earlier messages its request left out to fit the model's context. */
  omitted?: string[];
  /** On an agent's reply: its run, and the steps (text and tool calls) it took. */
  runId?: string;
  steps?: StepView[];
  /** On a reasoning model's reply: its thought (never sent back as the answer). */
  reasoning?: string;
  /** How long it thought: from the first piece of the thought to the first of the answer (unset while it thinks or when cut off). */
  reasoningMs?: number;
}

/** The agent conversation a chat continues on the companion, and which messages its history holds. */
export interface AgentThread {
  agent: string;
  conversationId: string;
  messages: string[];
}

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  model: string;
  settings: ChatSettings;
  /** The messages shown: the current version of every fork. */
  messages: StoredMessage[];
  /**
   * Other versions after a fork (an edited question, a regenerated reply): the id of the message
   * before the fork ('' at the start) -> the message lists that followed it there.
   */
  alternates?: Record<string, StoredMessage[][]>;
  agentThread?: AgentThread | null;
}

interface HearthDb extends DBSchema {
  conversations: { key: string; value: Conversation; indexes: { updatedAt: number } };
}

export const DEFAULT_SETTINGS: ChatSettings = { systemPrompt: '', temperature: null, topP: null, maxTokens: null, overflow: DEFAULT_OVERFLOW, thinking: true };

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
  const stored = (await (await db()).getAllFromIndex('conversations', 'updatedAt')).reverse();
  // Settings added later (the overflow policy) take their defaults in conversations saved before.
  return stored.map((conversation) => ({ ...conversation, settings: { ...DEFAULT_SETTINGS, ...conversation.settings } }));
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
