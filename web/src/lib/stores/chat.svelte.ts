import { ApiError } from '$lib/api/client';
import { agentOfKey, AgentRunFailed } from '$lib/chat/agent-reply';
import { imageRefusal as refusalFor, MAX_SIDE, type ImageRefusal } from '$lib/chat/attachments';
import { parseModelKey, type ModelRef } from '$lib/chat/backends';
import { fork, removeTurn, showVersion, versionAt } from '$lib/chat/branches';
import { ImageProblem, prepareImage, type PreparedImage } from '$lib/chat/downscale';
import { fitConversation, promptBudget, systemTokens, type OverflowPolicy } from '$lib/chat/context';
import { arrived, contextExceeded, contextMessages, ContextOverflow, failedTurn, rateFor, sendable } from '$lib/chat/history';
import { soundRefusal as soundRefusalFor, wavSeconds, type SoundRefusal } from '$lib/chat/sounds';
import { thinks } from '$lib/chat/thinking';
import { agentTurn, modelTurn, type Plan, type Turn } from '$lib/chat/turns';
import { EngineError } from '$lib/engines/types';
import { readDrafts, readModel, saveDrafts, saveModel } from '$lib/storage/chat-prefs';
import {
  DEFAULT_SETTINGS,
  deleteConversation,
  listConversations,
  newId,
  saveConversation,
  type ChatSettings,
  type Conversation,
  type MessageImage,
  type MessageSound,
  type StoredMessage,
} from '$lib/storage/conversations';
import { pruneMedia, readMedia, saveMedia } from '$lib/storage/media';
import { agents } from './agents.svelte';
import { models } from './models.svelte';
import { isKeyProblem, server } from './server.svelte';
import { describe } from './problems';

export type { Conversation, StoredMessage as Message, ChatSettings };

/** An image waiting in the composer, read and scaled down; `from`: the question it came back from after a failed send. */
export interface PendingImage extends PreparedImage {
  id: string;
  from?: string;
}

/** A recording waiting in the composer (the microphone's WAV); `from`: the question it came back from after a failed send. */
export interface PendingSound {
  id: string;
  blob: Blob;
  seconds: number;
  from?: string;
}

export interface ChatProblem {
  /** `auth`: the companion wants an access key; `overflow`: the conversation is over the context and set to stop; `too_long`: one message is. */
  kind: 'companion_lost' | 'auth' | 'failed' | 'overflow' | 'too_long' | 'interrupted';
  message: string;
  /** The reply it is about: the problem is shown there, once. */
  messageId: string | null;
  /** The question went back into the composer. */
  returned?: boolean;
}

const NEW = '(new)';
const SAVE_EVERY_MS = 500;
const CUT_OFF =
  'This reply was cut off when the page was reloaded or closed; what had arrived is kept. Continue asks for the reply again (this part stays as an earlier version).';
/** Tries with a longer token estimate after the companion counted a prompt longer than estimated. */
const FIT_ATTEMPTS = 4;

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

const count = (value: number) => value.toLocaleString('en');

/** A conversation's title from its first question (its images or recordings, when it has no text). */
function titleOf(text: string, images: number, sounds = 0): string {
  if (text || images + sounds === 0) return titleFrom(text);
  if (images === 0) return sounds === 1 ? 'A recording' : `${sounds} recordings`;
  return images === 1 ? 'An image' : `${images} images`;
}

const soundOf = (sound: PendingSound): MessageSound => ({ id: sound.id, type: sound.blob.type || 'audio/wav', seconds: sound.seconds });

const imageOf = (image: PendingImage): MessageImage => ({
  id: image.id,
  type: image.type,
  width: image.width,
  height: image.height,
  ...(image.name ? { name: image.name } : {}),
});

function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || 'New conversation';
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
  drafts = $state<Record<string, string>>(readDrafts());
  /** Images waiting in the composer per conversation ("(new)" before one exists); held while the page is open. */
  pending = $state<Record<string, PendingImage[]>>({});
  /** Recordings waiting in the composer per conversation ("(new)" before one exists); held while the page is open. */
  recordings = $state<Record<string, PendingSound[]>>({});
  /** What became of the images last attached (scaled down, or refused and why), for the composer's hint. */
  attachNote = $state<string | null>(null);
  /** The model (or `agent:<id>`) a new conversation starts with: the last one picked. */
  defaultModel = $state<string>(readModel());
  #controller: AbortController | null = null;
  /** Tokens per character learned from the companion's counts, per model key (not rendered). */
  #rates: Record<string, number> = {};

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
    saveModel(key);
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
    saveDrafts(this.drafts);
  }

  /** The images in the composer of the open conversation (or of a new one). */
  get attachments(): PendingImage[] {
    return this.pending[this.activeId ?? NEW] ?? [];
  }

  /** Why the composer's images cannot go to the chosen model, and which model can take them; null when they can (or there are none). */
  get imageRefusal(): ImageRefusal | null {
    if (this.attachments.length === 0) return null;
    return refusalFor(this.model, models.companion, this.#labelOf(this.model), agents.agents);
  }

  /** The recordings in the composer of the open conversation (or of a new one). */
  get clips(): PendingSound[] {
    return this.recordings[this.activeId ?? NEW] ?? [];
  }

  /** Why the composer's recordings cannot go to the chosen model, and which model can take them; null when they can (or there are none). */
  get soundRefusal(): SoundRefusal | null {
    if (this.clips.length === 0) return null;
    return soundRefusalFor(this.model, models.companion, this.#labelOf(this.model));
  }

  /** A recording from the microphone (a WAV) into the composer, to go with the next message. */
  attachSound(wav: Uint8Array): void {
    this.#addSound(this.activeId ?? NEW, new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), wavSeconds(wav));
  }

  #addSound(key: string, blob: Blob, seconds: number, from?: string): void {
    this.recordings[key] = [...(this.recordings[key] ?? []), { id: newId('snd'), blob, seconds, ...(from ? { from } : {}) }];
  }

  removeSound(id: string): void {
    const key = this.activeId ?? NEW;
    const rest = (this.recordings[key] ?? []).filter((sound) => sound.id !== id);
    if (rest.length > 0) this.recordings[key] = rest;
    else delete this.recordings[key];
  }

  #labelOf(key: string): string {
    const agent = agentOfKey(key);
    if (agent) return agents.agents.find((candidate) => candidate.id === agent)?.name ?? agent;
    return models.option(key)?.label ?? key.slice(key.indexOf(':') + 1);
  }

  /** Reads picked, pasted or dropped images into the composer, scaled down within MAX_SIDE; what was scaled or refused is said in `attachNote`. */
  async attach(files: File[]): Promise<void> {
    const key = this.activeId ?? NEW;
    const notes: string[] = [];
    let scaled: PreparedImage | undefined;
    for (const file of files) {
      try {
        const image = await prepareImage(file);
        if (image.original) scaled = image;
        this.#addPending(key, image);
      } catch (error) {
        notes.push(error instanceof ImageProblem ? error.message : `${file.name || 'The image'} could not be attached: ${describe(error)}`);
      }
    }
    if (scaled?.original)
      notes.unshift(
        `Images are kept within ${count(MAX_SIDE)} px on their longest side: ${scaled.name ?? 'the image'} (${count(scaled.original.width)} × ${count(scaled.original.height)}) was scaled down to ${count(scaled.width)} × ${count(scaled.height)}.`,
      );
    this.attachNote = notes.join(' ') || null;
  }

  #addPending(key: string, image: PreparedImage, from?: string): void {
    // Pushed through the state (an assignment's value is the array before it was made reactive).
    this.pending[key] = [...(this.pending[key] ?? []), { ...image, id: newId('img'), ...(from ? { from } : {}) }];
  }

  removeAttachment(id: string): void {
    const key = this.activeId ?? NEW;
    const rest = (this.pending[key] ?? []).filter((image) => image.id !== id);
    if (rest.length > 0) this.pending[key] = rest;
    else delete this.pending[key];
    this.attachNote = null;
  }

  get settings(): ChatSettings {
    return this.active?.settings ?? DEFAULT_SETTINGS;
  }

  async init(): Promise<void> {
    this.conversations = await listConversations();
    if (this.activeId && !this.conversations.some((conversation) => conversation.id === this.activeId)) this.activeId = null;
    this.activeId ??= this.conversations[0]?.id ?? null;
    await this.#markCutOff();
    this.ready = true;
  }

  /**
   * A reply still "streaming" in storage when the page starts was cut off by a reload or a closed
   * tab (no reply streams before `init`): what had arrived is kept, marked interrupted, and the
   * open conversation offers to continue.
   */
  async #markCutOff(): Promise<void> {
    for (const conversation of this.conversations) {
      const cut = conversation.messages.filter((message) => message.status === 'streaming');
      if (cut.length === 0) continue;
      for (const message of cut) Object.assign(message, { status: 'interrupted', error: CUT_OFF });
      await this.#save(conversation, false);
      const last = conversation.messages.at(-1);
      if (conversation.id === this.activeId && last && cut.includes(last))
        this.problem = { kind: 'interrupted', message: CUT_OFF, messageId: last.id, returned: false };
    }
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
    delete this.pending[id];
    delete this.recordings[id];
    if (this.activeId === id) this.activeId = this.conversations[0]?.id ?? null;
  }

  async updateSettings(patch: Partial<ChatSettings>): Promise<void> {
    const conversation = this.active ?? (await this.#create('New conversation'));
    Object.assign(conversation.settings, patch);
    await this.#save(conversation, false);
  }

  /** Sends the text with the composer's images and recordings; those the model cannot take are kept in the composer, with the reason. */
  async send(text: string): Promise<void> {
    const content = text.trim();
    const images = this.attachments;
    const sounds = this.clips;
    if ((!content && images.length === 0 && sounds.length === 0) || this.streaming) return;
    const refusal = this.imageRefusal ?? this.soundRefusal;
    if (refusal) {
      this.problem = { kind: 'failed', message: refusal.message, messageId: null };
      return;
    }
    const conversation = this.active ?? (await this.#create(titleOf(content, images.length, sounds.length)));
    // A turn that failed before anything came back is replaced by what is sent now.
    const failed = failedTurn(conversation.messages);
    if (failed !== null) conversation.messages.splice(failed);
    if (conversation.messages.length === 0 && conversation.title === 'New conversation') conversation.title = titleOf(content, images.length, sounds.length);
    // The bytes are stored before the message that names them.
    await saveMedia(
      conversation.id,
      [...images, ...sounds].map(({ id, blob }) => ({ id, blob })),
    );
    conversation.messages.push({
      id: newId('msg'),
      role: 'user',
      content,
      createdAt: Date.now(),
      ...(images.length > 0 ? { images: images.map(imageOf) } : {}),
      ...(sounds.length > 0 ? { sounds: sounds.map(soundOf) } : {}),
    });
    this.draft = '';
    delete this.pending[conversation.id];
    delete this.recordings[conversation.id];
    this.attachNote = null;
    await this.#save(conversation);
    if (failed !== null) await pruneMedia(conversation);
    await this.#reply(conversation);
  }

  /**
   * Asks again for a reply (the last one when none is named). A reply that was written is kept
   * as another version; a failed one is replaced.
   */
  async regenerate(messageId?: string): Promise<void> {
    const conversation = this.active;
    if (!conversation || this.streaming) return;
    const { messages } = conversation;
    const index = messageId ? messages.findIndex((message) => message.id === messageId) : messages.findLastIndex((message) => message.role === 'assistant');
    const reply = messages[index];
    if (reply?.role === 'assistant') {
      if ((reply.status === 'error' || reply.status === 'interrupted') && !arrived(reply)) messages.splice(index);
      else fork(conversation, index);
    }
    const question = messages.at(-1);
    if (question?.role !== 'user') return;
    if (this.draft.trim() === question.content) this.draft = '';
    // Images that came back to the composer from this question go with it again.
    const left = this.attachments.filter((image) => image.from !== question.id);
    if (left.length < this.attachments.length) this.pending[conversation.id] = left;
    const clips = this.clips.filter((sound) => sound.from !== question.id);
    if (clips.length < this.clips.length) this.recordings[conversation.id] = clips;
    await this.#reply(conversation);
  }

  /** Sends an edited question in place of an earlier one: the conversation forks there, the old branch stays as a version. */
  async edit(messageId: string, text: string): Promise<void> {
    const conversation = this.active;
    const content = text.trim();
    if (!conversation || this.streaming || !content) return;
    const index = conversation.messages.findIndex((message) => message.id === messageId);
    const original = conversation.messages[index];
    if (original?.role !== 'user') return;
    fork(conversation, index);
    // The edited question keeps the images and recordings of the one it replaces.
    const { images, sounds } = original;
    conversation.messages.push({
      id: newId('msg'),
      role: 'user',
      content,
      createdAt: Date.now(),
      ...(images ? { images } : {}),
      ...(sounds ? { sounds } : {}),
    });
    if (this.draft.trim() === content) this.draft = '';
    await this.#save(conversation);
    await this.#reply(conversation);
  }

  /** Deletes a question with its replies, or one reply. */
  async deleteTurn(messageId: string): Promise<void> {
    const conversation = this.active;
    if (!conversation || this.streaming) return;
    const removed = removeTurn(
      conversation,
      conversation.messages.findIndex((message) => message.id === messageId),
    );
    if (removed.some((message) => message.id === this.problem?.messageId)) this.problem = null;
    await this.#save(conversation, false);
    await pruneMedia(conversation);
  }

  /** Which version of the messages from `index` on is shown, of how many. */
  versionAt(index: number): { position: number; count: number } {
    return this.active ? versionAt(this.active, index) : { position: 1, count: 1 };
  }

  async showVersion(index: number, position: number): Promise<void> {
    const conversation = this.active;
    if (!conversation || this.streaming) return;
    showVersion(conversation, index, position);
    this.problem = null;
    await this.#save(conversation, false);
  }

  /** After the stop policy refused a request: another policy for this conversation, and the reply again. */
  async continueWithPolicy(policy: OverflowPolicy): Promise<void> {
    const failed = this.problem?.messageId;
    await this.updateSettings({ overflow: policy });
    await this.regenerate(failed ?? undefined);
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
    const images = this.pending[NEW];
    const sounds = this.recordings[NEW];
    this.conversations.unshift(conversation);
    this.activeId = conversation.id;
    if (draft) {
      delete this.drafts[NEW];
      this.draft = draft;
    }
    if (images) {
      delete this.pending[NEW];
      this.pending[conversation.id] = images;
    }
    if (sounds) {
      delete this.recordings[NEW];
      this.recordings[conversation.id] = sounds;
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

  /** What the next request sends of the conversation (all but the reply being written), by its policy. */
  #plan(conversation: Conversation, window: number | null, fixedText: string, fixedTokens = 0): Plan {
    const rate = rateFor(conversation, conversation.model, this.#rates);
    const history = contextMessages(sendable(conversation.messages.slice(0, -1)));
    const budget = window ? promptBudget(window, conversation.settings.maxTokens) : Number.POSITIVE_INFINITY;
    const fit = fitConversation({
      messages: history,
      fixedTokens: systemTokens(fixedText, rate) + fixedTokens,
      budget,
      policy: conversation.settings.overflow,
      tokensPerChar: rate,
    });
    return { ...fit, rate, window, budget };
  }

  async #reply(conversation: Conversation): Promise<void> {
    const agentId = agentOfKey(conversation.model);
    const ref = agentId ? null : parseModelKey(conversation.model);
    if (!agentId && !ref) {
      this.problem = { kind: 'failed', message: 'Pick a model first: one on the companion or one stored in this browser.', messageId: null };
      return;
    }
    conversation.messages.push({ id: newId('msg'), role: 'assistant', content: '', createdAt: Date.now(), model: conversation.model, status: 'streaming' });
    const reply = conversation.messages.at(-1)!;
    const controller = new AbortController();
    this.#controller = controller;
    this.streaming = conversation.id;
    this.problem = null;
    const started = performance.now();
    // Stored as it streams (at once, then at most every SAVE_EVERY_MS, the last part too), so a reload keeps what had arrived.
    let lastSave = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const progress = () => {
      if (timer !== undefined) return;
      timer = setTimeout(
        () => {
          timer = undefined;
          lastSave = Date.now();
          if (this.streaming === conversation.id) void this.#save(conversation);
        },
        Math.max(0, lastSave + SAVE_EVERY_MS - Date.now()),
      );
    };
    const leaving = () => void this.#save(conversation, false);
    if (typeof window !== 'undefined') window.addEventListener('pagehide', leaving);
    progress();
    try {
      if (ref && ref.runtime !== 'companion' && !(await models.prepare(ref)))
        throw new EngineError(models.prepareError ?? `${ref.id} could not be started.`, 'load_failed');
      controller.signal.throwIfAborted();
      for (let attempt = 1; ; attempt++) {
        try {
          Object.assign(reply, { content: '', steps: undefined, runId: undefined });
          const turn: Turn = {
            conversation,
            reply,
            signal: controller.signal,
            progress,
            plan: (window, fixedText, fixedTokens) => this.#plan(conversation, window, fixedText, fixedTokens),
          };
          // Whether the model (or the agent's model) reads the questions' images; one that does not gets a placeholder for each.
          const sees = refusalFor(conversation.model, models.companion, '', agents.agents) === null;
          if (agentId) {
            const agent = agents.agents.find((candidate) => candidate.id === agentId);
            const window = agent?.model ? (models.option(`companion:${agent.model}`)?.contextWindow ?? null) : null;
            await agentTurn(turn, agentId, agent, window, () => void agents.refreshApprovals(), sees);
          } else {
            const option = models.option(conversation.model);
            // Whether the model hears the questions' recordings; one that does not gets a placeholder for each.
            const hears = soundRefusalFor(conversation.model, models.companion, '') === null;
            await modelTurn(turn, ref!, option?.contextWindow ?? null, option?.label ?? ref!.id, thinks(models.companion, conversation.model), sees, hears);
          }
          break;
        } catch (error) {
          // The companion counted more than estimated: estimate longer and fit again (a stop policy stops here).
          if (!contextExceeded(error) || conversation.settings.overflow === 'stop' || attempt >= FIT_ATTEMPTS) throw error;
          this.#rates[conversation.model] = rateFor(conversation, conversation.model, this.#rates) * 1.6;
          conversation.agentThread = null;
          // The context window may not have been known yet (the model list not read): read it now.
          if (attempt === 1) await models.refreshCompanion();
        }
      }
      reply.status = 'done';
    } catch (error) {
      if (controller.signal.aborted || isAbort(error)) reply.status = 'stopped';
      else await this.#failed(conversation, reply, ref, error);
    } finally {
      if (reply.status !== 'error') {
        reply.stats ??= { promptTokens: null, completionTokens: null, tokensPerSecond: null, durationMs: null };
        reply.stats.durationMs = Math.round(performance.now() - started);
      }
      this.streaming = null;
      this.#controller = null;
      clearTimeout(timer);
      if (typeof window !== 'undefined') window.removeEventListener('pagehide', leaving);
      await this.#save(conversation);
      // A companion model is loaded by its first reply: the picker should say so.
      if (!ref || ref.runtime === 'companion') void models.refreshCompanion();
    }
  }

  /** A question's images back into its conversation's composer (read from storage: the failed turn is replaced when sending again). */
  async #returnImages(conversationId: string, question: StoredMessage): Promise<void> {
    for (const image of question.images ?? []) {
      const blob = await readMedia(image.id);
      if (blob)
        this.#addPending(
          conversationId,
          { blob, type: image.type === 'image/jpeg' ? 'image/jpeg' : 'image/png', width: image.width, height: image.height, name: image.name, original: null },
          question.id,
        );
    }
  }

  /** A question's recordings back into its conversation's composer, as its images come back. */
  async #returnSounds(conversationId: string, question: StoredMessage): Promise<void> {
    for (const sound of question.sounds ?? []) {
      const blob = await readMedia(sound.id);
      if (blob) this.#addSound(conversationId, blob, sound.seconds, question.id);
    }
  }

  async #failed(conversation: Conversation, reply: StoredMessage, ref: ModelRef | null, error: unknown): Promise<void> {
    const companion = !ref || ref.runtime === 'companion';
    const question = conversation.messages.at(-2);
    reply.status = 'error';
    reply.stats = undefined;
    const fail = (kind: ChatProblem['kind'], message: string) => {
      reply.error = message;
      // Nothing came back: the question goes back into that conversation's composer, to send again or change.
      const returned = !reply.content.trim() && question?.role === 'user' && !this.drafts[conversation.id]?.trim();
      if (returned) {
        this.drafts[conversation.id] = question.content;
        saveDrafts(this.drafts);
        if (question.images?.length && !this.pending[conversation.id]?.length) void this.#returnImages(conversation.id, question);
        if (question.sounds?.length && !this.recordings[conversation.id]?.length) void this.#returnSounds(conversation.id, question);
      }
      this.problem = { kind, message, messageId: reply.id, returned };
    };
    if (error instanceof ContextOverflow) return fail(error.fit.reason === 'message' ? 'too_long' : 'overflow', error.message);
    if (companion && isKeyProblem(error)) {
      server.needsKey(error);
      return fail('auth', error.message);
    }
    if (
      companion &&
      !(error instanceof AgentRunFailed) &&
      (!(error instanceof ApiError) || error.status === 0 || error.code === 'stream_interrupted' || error.status >= 500)
    ) {
      // Whether the companion is gone decides what the user is offered.
      const status = error instanceof ApiError && error.code === 'unreachable' ? 'unreachable' : await server.check();
      if (status === 'unreachable') {
        server.markUnreachable('The companion stopped answering during a reply.');
        reply.status = 'interrupted';
        return fail(
          'companion_lost',
          'The companion went away before the reply was finished. Your conversation is saved; continue with a model in this browser, or try again when the companion is back.',
        );
      }
    }
    const known = error instanceof EngineError || error instanceof ApiError || error instanceof AgentRunFailed;
    fail('failed', known ? error.message : `The reply failed: ${describe(error)}`);
  }
}

export const chat = new ChatStore();
