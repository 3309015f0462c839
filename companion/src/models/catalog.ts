import { HearthError } from '../errors.js';
import type { ModelRecord } from '#shared/api/openai.js';
import type { Engine } from '../inference/engine.js';
import { quantizationOf } from './hub.js';
import { scanModels, type LocalModel, type ScanOptions } from './registry.js';
import type { ProviderClient } from '../providers/client.js';

export type ModelTarget = { kind: 'local'; info: LocalModel } | { kind: 'provider'; id: string };

/**
 * Every model a request may name: local GGUF files (scanned, cached briefly) and the
 * configured providers' models. A bare id is only ever local; only "<provider>/<model>" reaches a provider.
 */
export class ModelCatalog {
  private scanned: LocalModel[] = [];
  private scannedAt = 0;
  private scanning: Promise<LocalModel[]> | undefined;

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

  /** Local models; a stale list is served while a rescan runs in the background. */
  async local(force = false): Promise<LocalModel[]> {
    const stale = Date.now() - this.scannedAt > this.freshForMs;
    if (force || this.scannedAt === 0) return this.rescan();
    if (stale) void this.rescan().catch(() => undefined);
    return this.scanned;
  }

  async list(): Promise<ModelRecord[]> {
    const [local, atProviders] = await Promise.all([this.local(), this.providers.listModels()]);
    return [
      ...local.map((info) => this.localRecord(info)),
      ...atProviders.map((model): ModelRecord => ({ id: model.id, object: 'model', created: 0, owned_by: model.owned_by, source: 'provider' })),
    ];
  }

  async resolve(id: string): Promise<ModelTarget> {
    if (this.providers.resolve(id)) return { kind: 'provider', id };
    const find = (models: LocalModel[]) => models.find((model) => model.id === id);
    const info = find(await this.local()) ?? find(await this.local(true));
    if (!info) {
      throw new HearthError(
        'model_not_found',
        `The model "${id}" does not exist. List the available models with GET /v1/models; a model file goes into the models folder.`,
        { param: 'model' },
      );
    }
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

  private rescan(): Promise<LocalModel[]> {
    this.scanning ??= scanModels(this.scan)
      .then((models) => {
        this.scanned = models;
        this.scannedAt = Date.now();
        return models;
      })
      .finally(() => {
        this.scanning = undefined;
      });
    return this.scanning;
  }
}
