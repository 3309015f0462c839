/** Conversations kept in IndexedDB: the history survives reloads, offline and a stopped companion. */
import { DEFAULT_OVERFLOW, type OverflowPolicy } from '$lib/chat/context';
import type { StepView } from '$lib/stores/agent-runs';
import { db } from './database';

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

/** An image sent with a question: its bytes are in the media store (media.ts), under `id`. */
export interface MessageImage {
  id: string;
  /** image/png or image/jpeg. */
  type: string;
  width: number;
  height: number;
  /** The file's name, when it had one (a pasted image has none). */
  name?: string;
}

/** A recording sent with a question (the microphone's WAV): its bytes are in the media store too, under `id`. */
export interface MessageSound {
  id: string;
  /** audio/wav. */
  type: string;
  /** How long it plays. */
  seconds: number;
}

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: number;
  /** On a question: the images sent with it (conversations stored before images have none). */
  images?: MessageImage[];
  /** On a question: the recordings sent with it (to a model that hears). */
  sounds?: MessageSound[];
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

export const DEFAULT_SETTINGS: ChatSettings = { systemPrompt: '', temperature: null, topP: null, maxTokens: null, overflow: DEFAULT_OVERFLOW, thinking: true };

/** Newest first. */
export async function listConversations(): Promise<Conversation[]> {
  const stored = (await (await db()).getAllFromIndex('conversations', 'updatedAt')).reverse();
  // Settings added later (the overflow policy) take their defaults in conversations saved before.
  return stored.map((conversation) => ({ ...conversation, settings: { ...DEFAULT_SETTINGS, ...conversation.settings } }));
}

export async function saveConversation(conversation: Conversation): Promise<void> {
  await (await db()).put('conversations', conversation);
}

/** Deletes a conversation and the images and recordings sent in it, together. */
export async function deleteConversation(id: string): Promise<void> {
  const transaction = (await db()).transaction(['conversations', 'media'], 'readwrite');
  const media = transaction.objectStore('media');
  const images = await media.index('conversationId').getAllKeys(id);
  await Promise.all([transaction.objectStore('conversations').delete(id), ...images.map((image) => media.delete(image)), transaction.done]);
}

export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID()}`;
}
