import { transcribe } from '$lib/api/audio';
import { downloadModelFile, listModels, modelFileSize } from '$lib/api/models';
import { modelKey, type ModelRef } from '$lib/chat/backends';
import { saveGguf } from '$lib/engines/gguf-files';
import { ENGINE_KINDS, engineHost, type EngineHost } from '$lib/engines/host';
import { WLLAMA_CONTEXT, type BrowserModel, type EngineKind, type EngineStatus, type LoadProgress } from '$lib/engines/types';
import type { Capability, ModelRecord } from '#shared/api/openai.js';
import { attempt } from './attempt';
import { describe } from './problems';

export interface ModelOption {
  key: string;
  ref: ModelRef;
  label: string;
  /** Size, quantization, context and state in a few words. */
  detail: string;
  sizeBytes: number | null;
  quantization: string | null;
  contextLength: number | null;
  /** Tokens one request may use (prompt and reply); null when unknown (a provider's model). */
  contextWindow: number | null;
  /** Null where loading does not apply (a provider's model). */
  loaded: boolean | null;
}

/** Where models run: on this machine (the companion), at a provider, or in this browser; or an agent the chat talks to. */
export type ModelPlace = 'local' | 'provider' | 'browser' | 'agent';

export interface ModelGroup {
  label: string;
  where: ModelPlace;
  options: ModelOption[];
}

export interface Download {
  received: number;
  total: number;
  status: 'sizing' | 'downloading' | 'done' | 'failed' | 'cancelled';
  error: string | null;
}

/** A model can chat unless it says otherwise. */
const chats = (model: ModelRecord) => !model.capabilities || model.capabilities.length === 0 || model.capabilities.includes('chat');

/** Whether a companion model can answer in the chat (an embedding model cannot): unknown ones are offered. */
export function canChat(id: string, list: ModelRecord[]): boolean {
  const model = list.find((entry) => entry.id === id);
  return !model || chats(model);
}

/** A model's capabilities in plain words, for its card. */
const CAPABILITY_WORDS: Record<Capability, string> = {
  chat: 'Chat',
  completion: 'Text completion',
  fim: 'Fill-in-the-middle',
  tools: 'Tools',
  vision: 'Images in',
  audio: 'Audio in',
  reasoning: 'Thinking',
  embedding: 'Embeddings',
};

export function capabilityWords(capabilities: readonly Capability[] | undefined): string {
  return (capabilities ?? []).map((capability) => CAPABILITY_WORDS[capability] ?? capability).join(', ');
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null) return 'size unknown';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  const power = Math.min(Math.floor(Math.log10(Math.max(bytes, 1)) / 3), units.length - 1);
  return `${(bytes / 1000 ** power).toFixed(power === 0 ? 0 : 1)} ${units[power]}`;
}

function companionOption(model: ModelRecord): ModelOption {
  const atProvider = model.source === 'provider';
  const facts = atProvider
    ? [`provider ${model.owned_by}`]
    : [
        formatBytes(model.size_bytes),
        model.quantization ?? '',
        model.context_length ? `${formatTokens(model.context_length)} context` : '',
        model.loaded ? 'loaded' : 'not loaded',
      ];
  return {
    key: modelKey({ runtime: 'companion', id: model.id }),
    ref: { runtime: 'companion', id: model.id },
    label: model.id,
    detail: facts.filter(Boolean).join(' · '),
    sizeBytes: model.size_bytes ?? null,
    quantization: model.quantization ?? null,
    contextLength: model.context_length ?? null,
    contextWindow: model.context_window ?? null,
    loaded: atProvider ? null : (model.loaded ?? false),
  };
}

/** 4096 -> "4K", 131072 -> "128K". */
export function formatTokens(tokens: number): string {
  return tokens >= 1024 && tokens % 1024 === 0 ? `${tokens / 1024}K` : tokens.toLocaleString('en');
}

export class ModelsStore {
  companion = $state<ModelRecord[]>([]);
  companionError = $state<string | null>(null);
  browser = $state<BrowserModel[]>([]);
  engines = $state<Record<EngineKind, EngineStatus | null>>({ wllama: null, webllm: null });
  browserError = $state<string | null>(null);
  /** Companion model id -> its file size, asked before downloading. */
  sizes = $state<Record<string, number>>({});
  downloads = $state<Record<string, Download>>({});
  /** An in-browser model being prepared (loaded, or downloaded by web-llm). */
  preparing = $state<{ key: string; progress: LoadProgress } | null>(null);
  prepareError = $state<string | null>(null);
  // Bookkeeping for cancel buttons, never rendered: a plain Map on purpose.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #controllers = new Map<string, AbortController>();

  constructor(private readonly host: () => EngineHost = engineHost) {}

  chatModels = $derived(this.companion.filter(chats));
  /** Stored in this browser and able to run here: what chat can fall back to. */
  runnableInBrowser = $derived(this.browser.filter((model) => model.stored && model.runnable));

  groups = $derived<ModelGroup[]>([
    { label: 'This machine', where: 'local', options: this.chatModels.filter((model) => model.source !== 'provider').map(companionOption) },
    { label: 'Providers', where: 'provider', options: this.chatModels.filter((model) => model.source === 'provider').map(companionOption) },
    {
      label: 'In this browser',
      where: 'browser',
      options: this.runnableInBrowser.map((model) => ({
        key: modelKey({ runtime: model.engine, id: model.id }),
        ref: { runtime: model.engine, id: model.id },
        label: model.name,
        detail: `${model.engine === 'wllama' ? 'on the processor' : 'on the graphics card'} · ${formatBytes(model.sizeBytes)}`,
        sizeBytes: model.sizeBytes,
        quantization: null,
        contextLength: null,
        contextWindow: model.engine === 'wllama' ? WLLAMA_CONTEXT : null,
        loaded: null,
      })),
    },
  ]);

  /** The group of in-browser models: what chat can continue with when the companion is gone. */
  browserOptions = $derived(this.groups.find((group) => group.where === 'browser')?.options ?? []);

  option(key: string): ModelOption | undefined {
    for (const group of this.groups) for (const option of group.options) if (option.key === key) return option;
    return undefined;
  }

  async refresh(): Promise<void> {
    await Promise.all([this.refreshCompanion(), this.refreshBrowser()]);
  }

  async refreshCompanion(): Promise<void> {
    try {
      this.companion = await listModels();
      this.companionError = null;
    } catch (error) {
      this.companionError = describe(error);
    }
  }

  /** The companion stopped answering: none of its models is loaded any more (the list stays, to show what it has). */
  companionGone(): void {
    if (this.companion.some((model) => model.loaded)) this.companion = this.companion.map((model) => (model.loaded ? { ...model, loaded: false } : model));
  }

  async refreshBrowser(): Promise<void> {
    const host = this.host();
    try {
      const statuses = await Promise.all(ENGINE_KINDS.map((kind) => host.engine(kind).status()));
      for (const status of statuses) this.engines[status.kind] = status;
      const lists = await Promise.all(statuses.filter((status) => status.available).map((status) => host.engine(status.kind).models()));
      this.browser = lists.flat();
      this.browserError = null;
    } catch (error) {
      this.browserError = describe(error);
    }
  }

  /** What a companion model that takes sound heard in a WAV recording (the chat's microphone). */
  transcribe(id: string, wav: Uint8Array, signal?: AbortSignal): Promise<string> {
    return transcribe(id, wav, signal);
  }

  /** The size of a companion model's file, before anything is downloaded. */
  async sizeOf(id: string): Promise<number | null> {
    if (this.sizes[id]) return this.sizes[id];
    try {
      this.sizes[id] = await modelFileSize(id);
      return this.sizes[id];
    } catch (error) {
      this.downloads[id] = { received: 0, total: 0, status: 'failed', error: describe(error) };
      return null;
    }
  }

  /** Copies a companion model's GGUF into this browser, with progress. */
  async downloadFromCompanion(id: string): Promise<void> {
    if (this.downloads[id]?.status === 'downloading') return;
    const controller = new AbortController();
    this.#controllers.set(id, controller);
    this.downloads[id] = { received: 0, total: this.sizes[id] ?? 0, status: 'downloading', error: null };
    const progress = this.downloads[id];
    try {
      const { size, body } = await downloadModelFile(id, controller.signal);
      progress.total = size;
      this.sizes[id] = size;
      await saveGguf(body, {
        name: id,
        size,
        origin: `companion: ${id}`,
        signal: controller.signal,
        onProgress: (written) => {
          progress.received = written;
        },
      });
      progress.status = 'done';
      await this.refreshBrowser();
    } catch (error) {
      progress.status = controller.signal.aborted ? 'cancelled' : 'failed';
      progress.error = controller.signal.aborted ? null : describe(error);
    } finally {
      this.#controllers.delete(id);
    }
  }

  cancelDownload(id: string): void {
    this.#controllers.get(id)?.abort(new DOMException('Download cancelled', 'AbortError'));
  }

  /** Stores a GGUF picked from the user's disk. */
  async importFile(file: File): Promise<void> {
    const key = `file:${file.name}`;
    this.downloads[key] = { received: 0, total: file.size, status: 'downloading', error: null };
    const progress = this.downloads[key];
    try {
      await saveGguf(file.stream(), {
        name: file.name,
        size: file.size,
        origin: `file: ${file.name}`,
        onProgress: (written) => {
          progress.received = written;
        },
      });
      progress.status = 'done';
      await this.refreshBrowser();
    } catch (error) {
      progress.status = 'failed';
      progress.error = describe(error);
    }
  }

  async remove(model: BrowserModel): Promise<void> {
    try {
      await this.host().engine(model.engine).remove(model.id);
    } catch (error) {
      this.browserError = describe(error);
    }
    await this.refreshBrowser();
  }

  /** Loads an in-browser model (web-llm downloads it first); errors are kept for the page. */
  async prepare(ref: ModelRef): Promise<boolean> {
    const { runtime } = ref;
    if (runtime === 'companion') return true;
    const key = modelKey(ref);
    this.prepareError = null;
    this.preparing = { key, progress: { fraction: null, text: `Starting ${ref.id}` } };
    return attempt(
      async () => {
        await this.host()
          .engine(runtime)
          .load(ref.id, (progress) => {
            if (this.preparing?.key === key) this.preparing.progress = progress;
          });
        await this.refreshBrowser();
        return true;
      },
      (error) => ((this.prepareError = describe(error)), false),
      () => (this.preparing = null),
    );
  }
}

export const models = new ModelsStore();
