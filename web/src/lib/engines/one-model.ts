/**
 * What both in-browser engines share: each holds at most one model loaded at a time. Unloading
 * lets the engine's instance of it go (a failure to close it is ignored: it is dropped either
 * way), and removing a stored model unloads it first when it is the one loaded.
 */
import type { BrowserEngine, BrowserModel, EngineChatRequest, EngineChatResult, EngineKind, EngineStatus, LoadProgress } from './types';

export abstract class OneModelEngine<Instance> implements BrowserEngine {
  abstract readonly kind: EngineKind;
  abstract status(): Promise<EngineStatus>;
  abstract models(): Promise<BrowserModel[]>;
  abstract load(model: string, onProgress: (progress: LoadProgress) => void): Promise<void>;
  abstract chat(request: EngineChatRequest, onDelta: (text: string) => void, signal: AbortSignal): Promise<EngineChatResult>;

  /** The engine's instance of the loaded model, and that model's id. */
  protected instance: Instance | null = null;
  protected loaded: string | null = null;

  /** Closes the engine's instance of a model. */
  protected abstract close(instance: Instance): Promise<unknown>;

  /** Deletes a model's files from the browser's storage. */
  protected abstract deleteStored(model: string): Promise<void>;

  async unload(): Promise<void> {
    const instance = this.instance;
    this.instance = null;
    this.loaded = null;
    if (instance) await this.close(instance).catch(() => undefined);
  }

  async remove(model: string): Promise<void> {
    if (this.loaded === model) await this.unload();
    await this.deleteStored(model);
  }
}
