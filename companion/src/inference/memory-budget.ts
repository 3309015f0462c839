/**
 * The engine's bookkeeping of what is loaded against the memory budget: chat models (either
 * engine), models held outside the chat pool (embedding contexts), room reserved for image work,
 * load failures remembered while a file is unchanged, and unloading least recently used idle
 * models to make room.
 */
import type { Llama, LlamaModel } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import type { Logger } from '../logger.js';
import { LoadFailures } from './load-failures.js';
import type { LoadedModel, LoadedStatus } from './loaded-model.js';
import type { ModelFile } from './types.js';

export { fileStamp } from './load-failures.js';

/** A model loaded through loadResident: what the engine needs to account for it and let it go. */
export interface Resident {
  id: string;
  /** Its share of the memory budget. */
  bytes: number;
  busy(): number;
  lastUsed(): number;
  status(): Omit<LoadedStatus, 'engine' | 'engineReason'>;
  /** Frees its contexts and the model; called once, by the engine. */
  dispose(): Promise<void>;
}

export abstract class MemoryBudget {
  protected readonly loaded = new Map<string, LoadedModel>();
  /** Models held outside the chat pool (embedding contexts). */
  protected readonly residents = new Map<string, Resident>();
  protected readonly failures = new LoadFailures();
  protected closed = false;
  private reservedBytes = 0;

  constructor(
    protected readonly log: Logger,
    private readonly budget: () => number,
  ) {}

  protected abstract openFile(
    info: ModelFile,
    options?: { onLoadProgress?: (fraction: number) => void; vocabOnly?: boolean },
  ): Promise<{ llama: Llama; model: LlamaModel }>;

  isLoaded(id: string): boolean {
    return this.loaded.has(id) || this.residents.has(id);
  }

  /** Why a model failed to load, while the file is unchanged. */
  loadError(info: ModelFile): string | undefined {
    return this.failures.message(info);
  }

  async unload(id: string): Promise<boolean> {
    if (this.residents.has(id)) return this.release(id);
    const entry = this.loaded.get(id);
    if (!entry) return false;
    this.loaded.delete(id);
    clearTimeout(entry.idleTimer);
    entry.rejectWaiting(new HearthError('server_busy', `${id} was unloaded while this request waited. Retry.`, { retryAfter: 1 }));
    await entry.dispose();
    this.log.info({ model: id }, 'model unloaded');
    return true;
  }

  /** Weights plus a margin for the context and compute buffers; a projector's weights load too. */
  protected weightBytes(info: ModelFile): number {
    return estimateBytes(info) + (info.projector?.sizeBytes ?? 0);
  }

  protected usedBytes(): number {
    return [...this.loaded.values()].reduce((sum, entry) => sum + entry.bytes, 0);
  }

  protected residentStatus(): LoadedStatus[] {
    // An embedding model's memory is its share of the budget; it always runs in process.
    return [...this.residents.values()].map((resident) => ({
      memoryBytes: resident.bytes,
      engine: 'in-process' as const,
      engineReason: 'Embedding models run in the companion (node-llama-cpp).',
      ...resident.status(),
    }));
  }

  /** Unloads idle models, least recently used first, until `needed` more bytes fit the memory budget. */
  protected async makeRoom(id: string, needed: number): Promise<void> {
    const budget = this.budget();
    if (needed > budget) {
      throw new HearthError(
        'model_load_failed',
        `${id} needs about ${mb(needed)} MB but the memory budget is ${mb(budget)} MB. Raise models.memory_budget_mb in config.yaml or use a smaller model.`,
        { param: 'model' },
      );
    }
    const held = () => [
      ...[...this.loaded.values()].map((entry) => ({ id: entry.info.id, bytes: entry.bytes, busy: entry.busy, lastUsed: entry.lastUsed })),
      ...[...this.residents.values()].map((resident) => ({ id: resident.id, bytes: resident.bytes, busy: resident.busy(), lastUsed: resident.lastUsed() })),
    ];
    const used = () => held().reduce((sum, entry) => sum + entry.bytes, this.reservedBytes);
    const idle = held()
      .filter((entry) => entry.busy === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (used() + needed > budget && idle.length > 0) await this.unload(idle.shift()!.id);
    if (used() + needed > budget) {
      throw new HearthError(
        'server_busy',
        `Loading ${id} needs about ${mb(needed)} MB; the models in use leave too little of the ${mb(budget)} MB budget. Retry when they finish.`,
        { retryAfter: 10 },
      );
    }
  }

  /**
   * Makes room in the memory budget for `bytes` used by something other than a language model
   * (an image pipeline) by unloading idle models like a model load would, and counts those bytes
   * against the budget until `release()`. Returns the models it unloaded, so they can be loaded
   * again afterwards.
   */
  async reserveMemory(label: string, bytes: number): Promise<{ unloaded: ModelFile[]; residents: string[]; release(): void }> {
    const before = [...this.loaded.values()].map((entry) => entry.info);
    const residents = [...this.residents.keys()];
    await this.makeRoom(label, bytes);
    this.reservedBytes += bytes;
    let released = false;
    return {
      unloaded: before.filter((info) => !this.loaded.has(info.id)),
      // Embedding models and the like: loaded again by their owner when next used.
      residents: residents.filter((id) => !this.residents.has(id)),
      release: () => {
        if (!released) this.reservedBytes -= bytes;
        released = true;
      },
    };
  }

  /**
   * Loads a model file for a context the caller builds and owns (an embedding context), after
   * making room for it in the memory budget; `build` turns the model into a Resident, which then
   * counts against the budget, is listed as loaded, and is disposed by unload(), close() or
   * memory pressure (when idle). A model whose build fails is disposed and its failure remembered.
   */
  async loadResident(info: ModelFile, build: (llama: Llama, model: LlamaModel) => Promise<Resident>): Promise<Resident> {
    if (this.closed) throw new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 });
    const known = this.loadError(info);
    if (known) throw new HearthError('model_load_failed', known, { param: 'model' });
    await this.makeRoom(info.id, estimateBytes(info));
    const { llama, model } = await this.openFile(info);
    let resident: Resident;
    try {
      resident = await build(llama, model);
    } catch (error) {
      await model.dispose();
      throw this.contextFailure(info, error);
    }
    this.residents.set(info.id, resident);
    if (this.closed) await this.release(info.id);
    return resident;
  }

  private async release(id: string): Promise<boolean> {
    const resident = this.residents.get(id);
    if (!resident) return false;
    this.residents.delete(id);
    await resident.dispose();
    this.log.info({ model: id }, 'model unloaded');
    return true;
  }

  /** A model whose context could not be created: remembered while the file is unchanged. */
  protected contextFailure(info: ModelFile, error: unknown): HearthError {
    if (error instanceof HearthError) return error;
    const message = `${info.id} loaded but its context could not be created: ${error instanceof Error ? error.message : String(error)}`;
    this.failures.remember(info, message);
    return new HearthError('model_load_failed', message, { param: 'model' });
  }
}

/** Weights plus a margin for the context and compute buffers. */
export function estimateBytes(info: Pick<ModelFile, 'sizeBytes'>): number {
  return Math.ceil(info.sizeBytes * 1.2) + 64 * 1024 * 1024;
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
