import { ApiError } from '$lib/api/client';
import { generate, parseModelKey, type GenerateResult } from '$lib/chat/backends';
import { EngineError } from '$lib/engines/types';
import {
  DEFAULT_SETTINGS,
  deleteConversation,
  listConversations,
  newId,
  saveConversation,
  type ChatSettings,
  type Conversation,
  type StoredMessage,
} from '$lib/storage/conversations';
import { models } from './models.svelte';
import { isKeyProblem, server } from './server.svelte';

export type { Conversation, StoredMessage as Message, ChatSettings };

export interface ChatProblem {
  /** `auth`: the companion wants an access key (or a better one) before it answers. */
  kind: 'companion_lost' | 'auth' | 'failed';
  message: string;
}

const DRAFTS_KEY = 'hearth.drafts';
const MODEL_KEY = 'hearth.model';
const NEW = '(new)';
const SAVE_EVERY_MS = 1000;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || 'New conversation';
}

function readJson<T>(key: string, fallback: T): T {
  try {
    const text = globalThis.localStorage?.getItem(key);
    return text ? (JSON.parse(text) as T) : fallback;
  } catch {
    return fallback;
  }
}

export class ChatStore {
  conversations = $state<Conversation[]>([]);
  activeId = $state<string | null>(null);
  query = $state('');
  ready = $state(false);
  /** Id of the conversation whose reply is streaming. */
  streaming = $state<string | null>(null);
  problem = $state<ChatProblem | null>(null);
  /** Unsent text per conversation ("(new)" before one exists); kept across reloads. */
  drafts = $state<Record<string, string>>(readJson(DRAFTS_KEY, {}));
  /** The model a new conversation starts with: the last one picked. */
  defaultModel = $state<string>(readJson(MODEL_KEY, ''));
  #controller: AbortController | null = null;

  active = $derived(this.conversations.find((conversation) => conversation.id === this.activeId) ?? null);

  filtered = $derived.by(() => {
    const query = this.query.trim().toLowerCase();
    if (!query) return this.conversations;
    return this.conversations.filter(
      (conversation) =>
        conversation.title.toLowerCase().includes(query) || conversation.messages.some((message) => message.content.toLowerCase().includes(query)),
    );
  });

  /** The model of the open conversation, or the one a new conversation would use. */
  get model(): string {
    return this.active?.model || this.defaultModel;
  }

  set model(key: string) {
    this.defaultModel = key;
    globalThis.localStorage?.setItem(MODEL_KEY, JSON.stringify(key));
    if (this.active && this.active.model !== key) {
      this.active.model = key;
      void this.#save(this.active);
    }
  }

  get draft(): string {
    return this.drafts[this.activeId ?? NEW] ?? '';
  }

  set draft(text: string) {
    const key = this.activeId ?? NEW;
    if (text) this.drafts[key] = text;
    else delete this.drafts[key];
    globalThis.localStorage?.setItem(DRAFTS_KEY, JSON.stringify(this.drafts));
  }

  get settings(): ChatSettings {
    return this.active?.settings ?? DEFAULT_SETTINGS;
  }

  async init(): Promise<void> {
    this.conversations = await listConversations();
    if (this.activeId && !this.conversations.some((conversation) => conversation.id === this.activeId)) this.activeId = null;
    this.activeId ??= this.conversations[0]?.id ?? null;
    this.ready = true;
  }

  /** Opens an empty conversation view; the conversation is created by its first message. */
  startNew(): void {
    this.activeId = null;
    this.problem = null;
  }

  select(id: string): void {
    this.activeId = id;
    this.problem = null;
  }

  async rename(id: string, title: string): Promise<void> {
    const conversation = this.conversations.find((candidate) => candidate.id === id);
    const trimmed = title.trim();
    if (!conversation || !trimmed) return;
    conversation.title = trimmed;
    await this.#save(conversation, false);
  }

  async remove(id: string): Promise<void> {
    if (this.streaming === id) this.stop();
    await deleteConversation(id);
    this.conversations = this.conversations.filter((conversation) => conversation.id !== id);
    delete this.drafts[id];
    if (this.activeId === id) this.activeId = this.conversations[0]?.id ?? null;
  }

  async updateSettings(patch: Partial<ChatSettings>): Promise<void> {
    const conversation = this.active ?? (await this.#create('New conversation'));
    Object.assign(conversation.settings, patch);
    await this.#save(conversation, false);
  }

  async send(text: string): Promise<void> {
    const content = text.trim();
    if (!content || this.streaming) return;
    const conversation = this.active ?? (await this.#create(titleFrom(content)));
    if (conversation.messages.length === 0 && conversation.title === 'New conversation') conversation.title = titleFrom(content);
    conversation.messages.push({ id: newId('msg'), role: 'user', content, createdAt: Date.now() });
    this.draft = '';
    await this.#save(conversation);
    await this.#reply(conversation);
  }

  /** Asks again for the last reply, with the conversation's current model. */
  async regenerate(): Promise<void> {
    const conversation = this.active;
    if (!conversation || this.streaming) return;
    if (conversation.messages.at(-1)?.role === 'assistant') conversation.messages.pop();
    if (conversation.messages.at(-1)?.role !== 'user') return;
    await this.#reply(conversation);
  }

  /** Continues after a failure with another model (e.g. an in-browser one). */
  async continueWith(modelKey: string): Promise<void> {
    this.model = modelKey;
    await this.regenerate();
  }

  stop(): void {
    this.#controller?.abort(new DOMException('The reply was stopped.', 'AbortError'));
  }

  async #create(title: string): Promise<Conversation> {
    const now = Date.now();
    const conversation: Conversation = {
      id: newId('conv'),
      title,
      createdAt: now,
      updatedAt: now,
      model: this.defaultModel,
      settings: { ...DEFAULT_SETTINGS },
      messages: [],
    };
    const draft = this.drafts[NEW];
    this.conversations.unshift(conversation);
    this.activeId = conversation.id;
    if (draft) {
      delete this.drafts[NEW];
      this.draft = draft;
    }
    await this.#save(this.conversations[0]!, false);
    return this.conversations[0]!;
  }

  async #save(conversation: Conversation, touch = true): Promise<void> {
    if (touch) {
      conversation.updatedAt = Date.now();
      const index = this.conversations.indexOf(conversation);
      if (index > 0) {
        this.conversations.splice(index, 1);
        this.conversations.unshift(conversation);
      }
    }
    await saveConversation($state.snapshot(conversation) as Conversation);
  }

  async #reply(conversation: Conversation): Promise<void> {
    const ref = parseModelKey(conversation.model);
    if (!ref) {
      this.problem = { kind: 'failed', message: 'Pick a model first: one on the companion or one stored in this browser.' };
      return;
    }
    const { settings } = conversation;
    const history = conversation.messages.map(({ role, content }) => ({ role, content }));
    const messages = settings.systemPrompt.trim() ? [{ role: 'system' as const, content: settings.systemPrompt.trim() }, ...history] : history;
    conversation.messages.push({ id: newId('msg'), role: 'assistant', content: '', createdAt: Date.now(), model: conversation.model, status: 'streaming' });
    const reply = conversation.messages.at(-1)!;
    const controller = new AbortController();
    this.#controller = controller;
    this.streaming = conversation.id;
    this.problem = null;
    const started = performance.now();
    let firstToken: number | null = null;
    let lastSave = Date.now();
    try {
      if (ref.runtime !== 'companion' && !(await models.prepare(ref)))
        throw new EngineError(models.prepareError ?? `${ref.id} could not be started.`, 'load_failed');
      controller.signal.throwIfAborted();
      const result: GenerateResult = await generate({
        model: ref,
        messages,
        temperature: settings.temperature ?? undefined,
        top_p: settings.topP ?? undefined,
        max_tokens: settings.maxTokens ?? undefined,
        signal: controller.signal,
        onDelta: (text) => {
          firstToken ??= performance.now();
          reply.content += text;
          if (Date.now() - lastSave > SAVE_EVERY_MS) {
            lastSave = Date.now();
            void this.#save(conversation);
          }
        },
      });
      const ended = performance.now();
      const seconds = firstToken === null ? 0 : (ended - firstToken) / 1000;
      reply.status = 'done';
      reply.finishReason = result.finishReason;
      reply.stats = {
        promptTokens: result.promptTokens,
        completionTokens: result.completionTokens,
        tokensPerSecond: result.tokensPerSecond ?? (result.completionTokens && seconds > 0 ? result.completionTokens / seconds : null),
        durationMs: Math.round(ended - started),
      };
    } catch (error) {
      reply.stats = { promptTokens: null, completionTokens: null, tokensPerSecond: null, durationMs: Math.round(performance.now() - started) };
      if (controller.signal.aborted || isAbort(error)) {
        reply.status = 'stopped';
      } else {
        await this.#failed(reply, ref.runtime, error);
      }
    } finally {
      this.streaming = null;
      this.#controller = null;
      await this.#save(conversation);
      // A companion model is loaded by its first reply: the picker should say so.
      if (ref.runtime === 'companion') void models.refreshCompanion();
    }
  }

  async #failed(reply: StoredMessage, runtime: string, error: unknown): Promise<void> {
    reply.error = describe(error);
    if (runtime === 'companion' && isKeyProblem(error)) {
      server.needsKey(error);
      reply.status = 'error';
      this.problem = { kind: 'auth', message: error.message };
      return;
    }
    if (runtime === 'companion' && (!(error instanceof ApiError) || error.status === 0 || error.code === 'stream_interrupted' || error.status >= 500)) {
      // Whether the companion is gone decides what the user is offered.
      const status = error instanceof ApiError && error.code === 'unreachable' ? 'unreachable' : await server.check();
      if (status === 'unreachable') {
        server.markUnreachable('The companion stopped answering during a reply.');
        reply.status = 'interrupted';
        this.problem = {
          kind: 'companion_lost',
          message:
            'The companion went away before the reply was finished. Your conversation is saved; continue with a model in this browser, or try again when the companion is back.',
        };
        return;
      }
    }
    reply.status = 'error';
    this.problem = {
      kind: 'failed',
      message: error instanceof EngineError || error instanceof ApiError ? error.message : `The reply failed: ${describe(error)}`,
    };
  }
}

export const chat = new ChatStore();
