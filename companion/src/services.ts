import { totalmem } from 'node:os';
import { loadConfigFile } from './config/document.js';
import { modelLoadSettings, projectorOverrides } from './config/model-overrides.js';
import { ModelCatalog } from './models/catalog.js';
import { chooseDraft } from './models/draft-vocabulary.js';
import { join } from 'node:path';
import type { EngineSetting } from '#shared/api/admin.js';
import { HearthError } from './errors.js';
import { Engine, type LoadEvent } from './inference/engine.js';
import { ServerBuild } from './inference/server/build-service.js';
import { NativeBuild } from './inference/server/native-service.js';
import { sweepOrphans } from './inference/server/process.js';
import { EngineMonitor } from './inference/monitor.js';
import { DownloadManager } from './models/downloads.js';
import { Embeddings } from './inference/embeddings.js';
import { ProviderClient } from './providers/client.js';
import { ProviderPools } from './providers/pools.js';
import { Metrics } from './metrics/metrics.js';
import { storedStates } from './metrics/stored-states.js';
import { ResponseStore } from './store/responses.js';
import { AdminCredential } from './access/admin-credential.js';
import { KeyStore } from './access/keys.js';
import type { Logger } from './logger.js';
import { Emitter } from './emitter.js';
import { AgentDispatcher } from './agents/dispatcher.js';
import { AgentService } from './agents/service.js';
import { ImageService } from './images/service.js';
import { McpManager } from './mcp/manager.js';
import { ChannelHost } from './channel/host/service.js';
import { PairedHosts } from './channel/device/hosts.js';
import { HostAgents } from './channel/device/host-agents.js';
import { CloudAgentSource } from './cloud/agent-source.js';
import { CloudAgents } from './cloud/agents.js';
import { CloudSignIn } from './cloud/sign-in.js';
import { MediaService } from './media/service.js';
import { localEmbeddingModels } from './memory/embedder.js';
import { localMemoryModels } from './memory/models.js';
import { MemoryService } from './memory/service.js';
import { createDataDirectory, dataPaths, type DataPaths } from './store/data-dir.js';
import { openDatabase, type Db } from './store/database.js';
import { DataFolderWatch } from './store/folder-watch.js';
import { lockDataDirectory } from './store/lock.js';
import { SecretStore } from './store/secrets.js';
import type { ConfigDocument } from '#shared/api/config.js';

export interface ServiceOptions {
  dataDir: string;
  /** Replace config.models.dirs when given (from --models-dir / HEARTH_MODELS_DIR). */
  modelsDirs?: string[];
  /** Override config.models.external_sources (from --no-external-models / HEARTH_EXTERNAL_MODELS). */
  externalSources?: boolean;
  /** Override config.models.engine (from HEARTH_ENGINE). */
  engine?: EngineSetting;
  log: Logger;
  version: string;
}

/** Everything the routes call into; built once per process, closed once. */
export interface Services {
  version: string;
  paths: DataPaths;
  /** The configuration in force; replaced as a whole when a change is applied. */
  readonly config: ConfigDocument;
  db: Db;
  secrets: SecretStore;
  keys: KeyStore;
  /** The local admin credential (`<data-dir>/admin-token`) and the app's sign-in links. */
  admin: AdminCredential;
  engine: Engine;
  /** Samples of what the engine does and load progress, for the app's status stream. */
  monitor: EngineMonitor;
  /** Model downloads started from the app. */
  downloads: DownloadManager;
  /** Embedding models, loaded through the engine (one loader, one memory budget). */
  embeddings: Embeddings;
  /** The configured model providers (`<provider>/<model>`): listing, forwarding, status. */
  readonly providers: ProviderClient;
  /** Every provider's endpoints (a pool, or one): health checks, circuits, load, conversation affinity; kept across configuration changes. */
  pools: ProviderPools;
  /** What GET /metrics reports (Prometheus text format). */
  metrics: Metrics;
  catalog: ModelCatalog;
  responses: ResponseStore;
  /** Memory: transcript, signals, distillation, search, recall, consolidation. */
  memory: MemoryService;
  /** Outbound MCP tool services and the tool catalog they fill. */
  mcp: McpManager;
  /** The secure channel's host side: certificates, paired devices, pairing, revocation. */
  channel: ChannelHost;
  /** The device side: hosts this companion is paired with, reached over mutual TLS. */
  pairedHosts: PairedHosts;
  /** Cloud workspaces: OAuth sign-in bound to account and workspace, and their published A2A agents. */
  cloud: { signIn: CloudSignIn; agents: CloudAgents };
  /** Agent runs, their events and approvals. */
  agents: AgentService;
  /** Where an agent runs: this machine, a paired host (`<host>/<agent>`) or a cloud workspace (`cloud:<workspace>/<agent>`). */
  dispatcher: AgentDispatcher;
  /** Image models, generation/edit/upscale jobs and the gallery. */
  images: ImageService;
  /** Hosted (paid) media: quotes, confirmed jobs, artifacts. */
  media: MediaService;
  /** Aborted when the server shuts down: open streams and generations stop. */
  shutdown: AbortSignal;
  /** Aborts `shutdown`: the first step of closing, taken before connections are cut. */
  stopWork(): void;
  /** The folders scanned for models, in order. */
  readonly modelsDirs: string[];
  /** Whether the data folder is still where it was opened: a deleted or moved one is noticed within seconds. */
  dataFolder: DataFolderWatch;
  /** The names of the parts in the order they were built; they close in the reverse order. */
  readonly parts: readonly string[];
  /**
   * Puts a validated configuration in force: every part's `configure(next)`, in the order they were
   * built (config/settings-table.ts says which settings wait for a model reload or a restart instead).
   */
  reconfigure(next: ConfigDocument): void;
  close(): Promise<void>;
}

/** What a part of the running companion does besides being built: its share of a configuration change, of starting and of closing. */
export interface PartHooks<T> {
  /**
   * Puts a configuration in force in what the part keeps (connections, pools, caches, engine options):
   * the one way a live setting that is not read through `config()` at each use reaches a part.
   */
  configure?(part: T, next: ConfigDocument): void;
  /** Background work begun once every part is built. */
  start?(part: T): void;
  close?(part: T): void | Promise<void>;
}

/**
 * The parts of the running companion, in the order they are built: each is built after the parts
 * it uses, reconfigured in that order, started in that order once all are built, and closed in the
 * reverse order (a part closes before the parts it uses).
 */
export class Parts {
  private readonly parts: { name: string; configure?(next: ConfigDocument): void; start?(): void; close?(): void | Promise<void> }[] = [];
  private closing: Promise<void> | undefined;

  add<T>(name: string, value: T, hooks: PartHooks<T> = {}): T {
    if (this.closing) throw new Error(`The part ${name} was built after closing began.`);
    const { configure, start, close } = hooks;
    this.parts.push({
      name,
      configure: configure && ((next) => configure(value, next)),
      start: start && (() => start(value)),
      close: close && (() => close(value)),
    });
    return value;
  }

  /** The parts' names in the order they were built. */
  names(): string[] {
    return this.parts.map((part) => part.name);
  }

  configure(next: ConfigDocument): void {
    for (const part of this.parts) part.configure?.(next);
  }

  start(): void {
    for (const part of this.parts) part.start?.();
  }

  /** Closes every part, last built first; one that fails does not keep the others open (the first failure is thrown at the end). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: { error: unknown } | undefined;
      for (const part of [...this.parts].reverse()) {
        try {
          await part.close?.();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    })();
    return this.closing;
  }
}

export async function createServices(options: ServiceOptions): Promise<Services> {
  const paths = dataPaths(options.dataDir);
  createDataDirectory(paths);
  const parts = new Parts();
  // Each part below is built from parts built above it, never from one built later; the lock is
  // the first part and so the last released.
  parts.add('lock', lockDataDirectory(paths.root, paths.lock), { close: (release) => release() });
  try {
    let current = loadConfigFile(paths.config, (warning) => options.log.warn(warning));
    /** The configuration in force: live settings are read through it at each use, never copied. */
    const config = (): ConfigDocument => current;
    parts.add('config', config, { configure: (_config, next) => void (current = next) });
    const db = parts.add('db', openDatabase(paths.database), { close: (database) => void database.close() });
    const dataFolder = parts.add('dataFolder', new DataFolderWatch({ paths, log: options.log }), {
      start: (part) => part.start(),
      close: (part) => part.stop(),
    });
    const secrets = parts.add('secrets', new SecretStore(paths.secrets));
    const keys = parts.add('keys', new KeyStore(db));
    const admin = parts.add('admin', new AdminCredential(paths.adminToken, db));
    const threads = threadMemory(db);
    const pools = parts.add('pools', new ProviderPools(secrets.resolve, { log: options.log }), {
      configure: (part, next) => part.configure(next.providers),
      close: (part) => part.close(),
    });
    pools.configure(config().providers);
    // llama-server processes a killed companion left on this data folder end before any new one starts.
    const runDir = join(paths.root, 'engine');
    sweepOrphans(runDir, options.log);
    const engineOf = (document: ConfigDocument) => ({ ...engineSettings(document), engine: options.engine ?? document.models.engine });
    const build = parts.add('build', new ServerBuild(process.env, options.log));
    // After the first start the llama-server engine is built in the background (models run in process meanwhile).
    if (engineOf(config()).engine !== 'in-process') build.startInBackground();
    // Once that is ready, the native build for this CPU follows in the background (models.native_build).
    const native = parts.add('native', new NativeBuild(build, config().models.native_build, process.env, options.log), {
      configure: (part, next) => part.configure(next.models.native_build, engineOf(next).engine),
      start: (part) => part.configure(config().models.native_build, engineOf(config()).engine),
      close: (part) => part.close(),
    });
    // What the engine reports goes to whoever listens: the metrics and the monitor, built after it.
    const draftFiles: { find: (id: string) => Promise<string | undefined> } = { find: async () => undefined };
    const engineEvents = new Emitter<{ load: [LoadEvent]; firstToken: [string, number]; generated: [string, number, number] }>();
    const engine = parts.add(
      'engine',
      new Engine({
        ...engineOf(config()),
        build,
        native,
        runDir,
        threadMemory: threads,
        // A model's draft is named by its id: the catalog, built after the engine, fills in how its file is found.
        chooseDraft: (modelPath, draftId) => chooseDraft(modelPath, draftId, (id: string) => draftFiles.find(id)),
        log: options.log,
        onLoad: (event) => engineEvents.emit('load', event),
        observer: {
          firstToken: (model, seconds) => engineEvents.emit('firstToken', model, seconds),
          generated: (model, prompt, completion) => engineEvents.emit('generated', model, prompt, completion),
        },
      }),
      { configure: (part, next) => part.configure(engineOf(next)), close: (part) => part.close() },
    );
    // A provider client holds one configuration's providers (and their model lists): a new configuration gets a new client.
    const providerClient = (document: ConfigDocument) => new ProviderClient(document.providers, secrets.resolve, undefined, pools);
    let providerClientInForce = providerClient(config());
    const providers = parts.add('providers', (): ProviderClient => providerClientInForce, {
      configure: (_providers, next) => void (providerClientInForce = providerClient(next)),
    });
    const scanOf = (document: ConfigDocument) => ({
      modelsDirs: [paths.models, ...(options.modelsDirs ?? document.models.dirs)],
      externalSources: options.externalSources ?? document.models.external_sources,
      projectors: projectorOverrides(document),
    });
    const catalog = parts.add('catalog', new ModelCatalog(scanOf(config()), engine, providers()), {
      configure: (part, next) => part.configure(scanOf(next), providers()),
    });
    draftFiles.find = async (id) => (await catalog.local()).find((model) => model.id === id)?.path;
    const metrics = parts.add(
      'metrics',
      new Metrics({
        engine: () => engine,
        pools: () => pools.list(),
        stored: () => storedStates(db),
        localModels: () => catalog.knownLocal(),
        providerModel: (id) => providers().modelListed(id),
      }),
    );
    pools.observe(metrics);
    engineEvents.on('load', metrics.onLoad);
    engineEvents.on('firstToken', (model, seconds) => metrics.firstToken(model, seconds));
    engineEvents.on('generated', (model, prompt) => metrics.generated(model, prompt));
    const monitor = parts.add('monitor', new EngineMonitor({ engine: () => engine }), { start: (part) => part.start(), close: (part) => part.stop() });
    engineEvents.on('load', monitor.onLoad);
    const embeddings = parts.add('embeddings', new Embeddings(engine, () => engineSettings(config()), options.log, threads));
    const downloads = parts.add(
      'downloads',
      new DownloadManager({
        db,
        modelsDir: () => paths.models,
        identify: async (file) => (await catalog.local(true)).find((model) => model.path === file)?.id ?? null,
        log: options.log,
      }),
      { start: (part) => part.start(), close: (part) => part.close() },
    );
    const responses = parts.add('responses', new ResponseStore(db));
    const memory = parts.add(
      'memory',
      new MemoryService({
        db,
        settings: () => config().memory,
        models: localMemoryModels({
          catalog,
          engine,
          modelId: () => config().memory.model,
          contextSize: () => modelLoadSettings(config().models, config().memory.model ?? '').context_size,
        }),
        embeddings: localEmbeddingModels({ catalog, embeddings, modelId: () => config().memory.embedding_model, log: options.log }),
        log: options.log,
      }),
      { start: (part) => part.start(), close: (part) => part.close() },
    );
    const mcp = parts.add('mcp', new McpManager({ services: config().mcp_services, secrets, log: options.log, version: options.version }), {
      configure: (part, next) => part.configure(next.mcp_services),
      // Auto-connect services connect in the background; starting never waits for them.
      start: (part) => part.start(),
      // Every MCP connection and service process ends before the data directory is released.
      close: (part) => part.close(),
    });
    const channel = parts.add(
      'channel',
      new ChannelHost({
        db,
        folder: paths.remote,
        settings: () => config().server.remote,
        agentIds: () => config().agents.map((agent) => agent.id),
      }),
    );
    const pairedHosts = parts.add('pairedHosts', new PairedHosts({ hosts: () => config().remote_hosts, secrets }), { close: (part) => part.close() });
    const cloud = parts.add('cloud', cloudWorkspaces(config, secrets, options.log), { close: (part) => part.signIn.close() });
    const images = parts.add(
      'images',
      new ImageService({
        db,
        imagesDir: paths.images,
        folders: () => [...scanOf(config()).modelsDirs, ...config().images.dirs],
        providers: () => config().providers,
        providerClient: providers,
        memory: engine,
        threads: () => config().models.threads,
        log: options.log,
      }),
      { configure: (part) => part.invalidate(), close: (part) => part.close() },
    );
    const media = parts.add('media', new MediaService({ db, mediaDir: paths.media, config, resolveSecret: secrets.resolve, log: options.log }), {
      configure: (part, next) => part.configure(next),
      // Hosted media jobs left running by the last process are followed again (never resent).
      start: (part) => part.start(),
      close: (part) => part.close(),
    });
    const agents = parts.add(
      'agents',
      new AgentService({ db, config, models: { catalog, engine, providers }, tools: mcp, memory, log: options.log }),
      // Runs end first of the parts that do work: they still write their outcome, their conversation and memory.
      { close: (part) => part.close() },
    );
    agents.recover();
    const dispatcher = parts.add(
      'dispatcher',
      new AgentDispatcher({
        config,
        local: agents,
        hosts: new HostAgents({ config, runs: agents, hosts: pairedHosts, log: options.log }),
        cloud: new CloudAgentSource({ config, runs: agents, cloud, artifacts: paths.artifacts, log: options.log }),
      }),
    );
    // Built last, so closing begins with it: open streams and generations stop before any part closes.
    const shutdown = new AbortController();
    const stopWork = () => {
      // What a request stopped by it answers: a 503 that says why, in its protocol's error shape.
      if (!shutdown.signal.aborted) shutdown.abort(new HearthError('server_busy', 'The server is shutting down.', { retryAfter: 5 }));
    };
    parts.add('shutdown', shutdown, { close: () => stopWork() });
    const services: Services = {
      version: options.version,
      paths,
      get config() {
        return config();
      },
      db,
      secrets,
      keys,
      admin,
      engine,
      monitor,
      downloads,
      embeddings,
      get providers() {
        return providers();
      },
      pools,
      metrics,
      catalog,
      responses,
      memory,
      mcp,
      channel,
      pairedHosts,
      cloud,
      agents,
      dispatcher,
      images,
      media,
      shutdown: shutdown.signal,
      stopWork,
      dataFolder,
      get modelsDirs() {
        return scanOf(config()).modelsDirs;
      },
      parts: parts.names(),
      reconfigure: (next) => parts.configure(next),
      close: () => parts.close(),
    };
    parts.start();
    return services;
  } catch (error) {
    // What was built is closed again, last built first; the lock goes last.
    await parts.close().catch(() => undefined);
    throw error;
  }
}

function cloudWorkspaces(config: () => ConfigDocument, secrets: SecretStore, log: Logger) {
  const signIn = new CloudSignIn({ workspaces: () => config().cloud_workspaces, secrets, log });
  return { signIn, agents: new CloudAgents(signIn) };
}

function threadMemory(db: Db) {
  const read = db.prepare<[string], { threads: number }>('SELECT threads FROM thread_measurements WHERE model_key = ?');
  const write = db.prepare('INSERT OR REPLACE INTO thread_measurements (model_key, threads, measured_at) VALUES (?, ?, ?)');
  return {
    get: (key: string) => read.get(key)?.threads,
    set: (key: string, threads: number) => void write.run(key, threads, Date.now()),
  };
}

function engineSettings(config: ConfigDocument) {
  const settings = config.models;
  return {
    gpu: settings.gpu,
    threads: settings.threads,
    contextSize: settings.context_size,
    parallel: settings.parallel,
    queueLimit: settings.queue_limit,
    idleUnloadSeconds: settings.idle_unload_seconds,
    memoryBudgetBytes: (settings.memory_budget_mb || Math.floor(totalmem() / 2 / 1048576)) * 1048576,
    slotCacheBytes: settings.slot_cache_mb * 1048576,
    overrides: Object.fromEntries(
      Object.entries(settings.overrides).map(([id, own]) => [
        id,
        { contextSize: own.context_size, gpuLayers: own.gpu_layers, threads: own.threads, parallel: own.parallel, draft: own.draft },
      ]),
    ),
  };
}
