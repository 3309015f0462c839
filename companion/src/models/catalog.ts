import { HearthError } from '../errors.js';
import type { ModelRecord } from '#shared/api/openai.js';
import type { Engine } from '../inference/engine.js';
import { quantizationOf } from './hub.js';
import { scanModels, type LocalModel, type ScanOptions } from './registry.js';
import { unknownModelAdvice, type KnownModels } from './suggest.js';
import type { ProviderClient } from '../providers/client.js';

export type ModelTarget = { kind: 'local'; info: LocalModel } | { kind: 'provider'; id: string };

/** How long an unknown-model error waits for the providers' lists it names. */
const PROVIDER_LIST_WAIT_MS = 2000;

/**
 * Every model a request may name: local GGUF files (scanned, cached briefly) and the
 * configured providers' models. A bare id is only ever local; only "<provider>/<model>" reaches a provider.
 */
export class ModelCatalog {
  private scanned: LocalModel[] = [];
  private scannedAt = 0;
  private scanning: Promise<LocalModel[]> | undefined;
  /** A scan asked for while another runs: it starts when that one ends, so it sees every change made before it was asked for. */
  private next: Promise<LocalModel[]> | undefined;

  constructor(
    private scan: ScanOptions,
    private readonly engine: Engine,
    private providers: ProviderClient,
    private readonly freshForMs = 5000,
  ) {}

  configure(scan: ScanOptions, providers: ProviderClient): void {
    this.scan = scan;
    this.providers = providers;
    this.scannedAt = 0;
  }

  /** Whether other apps' folders (LM Studio, Ollama, ...) are searched. */
  get externalSources(): boolean {
    return this.scan.externalSources;
  }

  /** Local models; a stale list is served while a rescan runs in the background. */
  async local(force = false): Promise<LocalModel[]> {
    const stale = Date.now() - this.scannedAt > this.freshForMs;
    if (force || this.scannedAt === 0) return this.rescan();
    if (stale) void this.rescan().catch(() => undefined);
    return this.scanned;
  }

  /** Ids of the local models as last scanned (no scan). */
  knownLocal(): string[] {
    return this.scanned.map((model) => model.id);
  }

  /**
   * The model list (GET /v1/models): always scanned for this request, so a model copied into a
   * folder is in the very next answer. A scan reads only folders and file sizes; the GGUF
   * metadata of a file seen before comes from the cache.
   */
  async list(): Promise<ModelRecord[]> {
    const [local, atProviders] = await Promise.all([this.local(true), this.providers.listModels()]);
    return [
      ...local.map((info) => this.localRecord(info)),
      ...atProviders.map((model): ModelRecord => ({ id: model.id, object: 'model', created: 0, owned_by: model.owned_by, source: 'provider' })),
    ];
  }

  async resolve(id: string): Promise<ModelTarget> {
    if (this.providers.resolve(id)) return { kind: 'provider', id };
    const find = (models: LocalModel[]) => models.find((model) => model.id === id);
    const info = find(await this.local()) ?? find(await this.local(true));
    if (!info) throw new HearthError('model_not_found', `The model "${id}" does not exist here. ${await this.advice(id)}`, { param: 'model' });
    if (info.error) throw new HearthError('model_load_failed', `${id} cannot be used: ${info.error}`, { param: 'model' });
    return { kind: 'local', info };
  }

  localRecord(info: LocalModel): ModelRecord {
    const error = info.error ?? this.engine.loadError(info);
    return {
      id: info.id,
      object: 'model',
      created: 0,
      owned_by: info.source === 'models-dir' ? 'local' : info.source,
      source: 'local',
      loaded: this.engine.isLoaded(info.id),
      size_bytes: info.sizeBytes,
      context_length: info.contextLength,
      context_window: info.capabilities.includes('chat') ? this.engine.contextWindow(info.id, info.contextLength) : null,
      quantization: quantizationOf(info.path),
      capabilities: info.capabilities,
      ...(error ? { error } : {}),
    };
  }

  /** The ids a request could have meant, as known now (the providers' lists only as far as they answer promptly). */
  async known(): Promise<KnownModels> {
    const atProviders = await this.providers.listModels(AbortSignal.timeout(PROVIDER_LIST_WAIT_MS)).catch(() => []);
    return {
      local: this.scanned.map((model) => model.id),
      providerModels: atProviders.map((model) => model.id),
      providers: this.providers.status().map((provider) => provider.name),
    };
  }

  /** What to say after "The model X does not exist": the one meant, how ids are formed, the ids there are. */
  async advice(id: string): Promise<string> {
    return unknownModelAdvice(id, await this.known());
  }

  /** A scan that starts now, or once the one running ends (which may have read the folders before a change). */
  private rescan(): Promise<LocalModel[]> {
    if (!this.scanning) {
      this.scanning = this.scanOnce();
      return this.scanning;
    }
    this.next ??= this.scanning
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        this.scanning = this.scanOnce();
        return this.scanning;
      });
    return this.next;
  }

  private scanOnce(): Promise<LocalModel[]> {
    const scan = scanModels(this.scan)
      .then((models) => {
        this.scanned = models;
        this.scannedAt = Date.now();
        return models;
      })
      .finally(() => {
        if (this.scanning === scan) this.scanning = undefined;
      });
    return scan;
  }
}
