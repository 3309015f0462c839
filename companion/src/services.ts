import { totalmem } from 'node:os';
import { loadConfigFile } from './config/document.js';
import { modelLoadSettings } from './config/model-overrides.js';
import { ModelCatalog } from './models/catalog.js';
import { join } from 'node:path';
import type { EngineSetting } from '#shared/api/admin.js';
import { Engine, type LoadEvent } from './inference/engine.js';
import { ServerBuild } from './inference/server/build-service.js';
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
  config: ConfigDocument;
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
  providers: ProviderClient;
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
  /** Puts a validated configuration in force without a restart (the listener's host and port excepted). */
  reconfigure(next: ConfigDocument): void;
  close(): Promise<void>;
}

export async function createServices(options: ServiceOptions): Promise<Services> {
  const paths = dataPaths(options.dataDir);
  createDataDirectory(paths);
  const unlock = lockDataDirectory(paths.root, paths.lock);
  try {
    const config = loadConfigFile(paths.config, (warning) => options.log.warn(warning));
    const db = openDatabase(paths.database);
    const secrets = new SecretStore(paths.secrets);
    const threads = threadMemory(db);
    const monitor: EngineMonitor = new EngineMonitor({ engine: (): Engine => engine });
    const pools = new ProviderPools(secrets.resolve, { log: options.log });
    const metrics: Metrics = new Metrics({
      engine: () => engine,
      pools: () => pools.list(),
      stored: () => storedStates(db),
      localModels: () => catalog.knownLocal(),
      providerModel: (id) => services.providers.modelListed(id),
    });
    pools.observe(metrics);
    const onLoad = (event: LoadEvent): void => {
      monitor.onLoad(event);
      metrics.onLoad(event);
    };
    // llama-server processes a killed companion left on this data folder end before any new one starts.
    const runDir = join(paths.root, 'engine');
    sweepOrphans(runDir, options.log);
    const engineOf = (document: ConfigDocument) => ({ ...engineSettings(document), engine: options.engine ?? document.models.engine });
    const build = new ServerBuild(process.env, options.log);
    // After the first start the llama-server engine is built in the background (models run in process meanwhile).
    if (engineOf(config).engine !== 'in-process') build.startInBackground();
    const engine = new Engine({
      ...engineOf(config),
      build,
      runDir,
      threadMemory: threads,
      log: options.log,
      onLoad,
      observer: metrics,
    });
    pools.configure(config.providers);
    const providers = new ProviderClient(config.providers, secrets.resolve, undefined, pools);
    const scanOf = (document: ConfigDocument) => ({
      modelsDirs: [paths.models, ...(options.modelsDirs ?? document.models.dirs)],
      externalSources: options.externalSources ?? document.models.external_sources,
    });
    const catalog = new ModelCatalog(scanOf(config), engine, providers);
    const shutdown = new AbortController();
    let closed = false;
    const embeddings = new Embeddings(engine, () => engineSettings(services.config), options.log, threads);
    const services: Services = {
      version: options.version,
      paths,
      config,
      db,
      secrets,
      keys: new KeyStore(db),
      admin: new AdminCredential(paths.adminToken, db),
      engine,
      monitor,
      downloads: new DownloadManager({
        db,
        modelsDir: () => paths.models,
        identify: async (file) => (await catalog.local(true)).find((model) => model.path === file)?.id ?? null,
        log: options.log,
      }),
      embeddings,
      providers,
      pools,
      metrics,
      catalog,
      responses: new ResponseStore(db),
      memory: new MemoryService({
        db,
        settings: () => services.config.memory,
        models: localMemoryModels({
          catalog,
          engine,
          modelId: () => services.config.memory.model,
          contextSize: () => modelLoadSettings(services.config.models, services.config.memory.model ?? '').context_size,
        }),
        embeddings: localEmbeddingModels({ catalog, embeddings, modelId: () => services.config.memory.embedding_model, log: options.log }),
        log: options.log,
      }),
      mcp: new McpManager({ services: config.mcp_services, secrets, log: options.log, version: options.version }),
      channel: new ChannelHost({
        db,
        folder: paths.remote,
        settings: () => services.config.server.remote,
        agentIds: () => services.config.agents.map((agent) => agent.id),
      }),
      pairedHosts: new PairedHosts({ hosts: () => services.config.remote_hosts, secrets }),
      cloud: cloudWorkspaces(() => services.config, secrets, options.log),
      get agents(): AgentService {
        return agents;
      },
      get dispatcher(): AgentDispatcher {
        return dispatcher;
      },
      images: new ImageService({
        db,
        imagesDir: paths.images,
        folders: () => [...scanOf(services.config).modelsDirs, ...services.config.images.dirs],
        providers: () => services.config.providers,
        providerClient: () => services.providers,
        memory: engine,
        threads: () => services.config.models.threads,
        log: options.log,
      }),
      media: new MediaService({ db, mediaDir: paths.media, config: () => services.config, resolveSecret: secrets.resolve, log: options.log }),
      shutdown: shutdown.signal,
      stopWork() {
        if (!shutdown.signal.aborted) shutdown.abort(new Error('server shutting down'));
      },
      get modelsDirs() {
        return scanOf(services.config).modelsDirs;
      },
      reconfigure(next: ConfigDocument) {
        services.config = next;
        engine.configure(engineOf(next));
        pools.configure(next.providers);
        services.providers = new ProviderClient(next.providers, secrets.resolve, undefined, pools);
        catalog.configure(scanOf(next), services.providers);
        services.mcp.configure(next.mcp_services);
        services.images.invalidate();
        services.media.configure(next);
      },
      async close() {
        if (closed) return;
        closed = true;
        services.stopWork();
        // Runs end first: they still write their outcome, their conversation and memory.
        await agents.close();
        monitor.stop();
        pools.close();
        await services.downloads.close();
        await services.memory.close();
        // Every MCP connection and service process ends before the data directory is released.
        await services.mcp.close();
        services.pairedHosts.close();
        services.cloud.signIn.close();
        await services.images.close();
        await services.media.close();
        await engine.close();
        db.close();
        unlock();
      },
    };
    const agents = new AgentService({
      db,
      config: () => services.config,
      models: { catalog, engine, providers: () => services.providers },
      tools: services.mcp,
      memory: services.memory,
      log: options.log,
    });
    agents.recover();
    const dispatcher = new AgentDispatcher({
      config: () => services.config,
      local: agents,
      hosts: new HostAgents({ config: () => services.config, runs: agents, hosts: services.pairedHosts, log: options.log }),
      cloud: new CloudAgentSource({ config: () => services.config, runs: agents, cloud: services.cloud, artifacts: paths.artifacts, log: options.log }),
    });
    services.memory.start();
    monitor.start();
    services.downloads.start();
    // Hosted media jobs left running by the last process are followed again (never resent).
    services.media.start();
    // Auto-connect services connect in the background; starting never waits for them.
    services.mcp.start();
    return services;
  } catch (error) {
    unlock();
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
    overrides: Object.fromEntries(
      Object.entries(settings.overrides).map(([id, own]) => [
        id,
        { contextSize: own.context_size, gpuLayers: own.gpu_layers, threads: own.threads, parallel: own.parallel },
      ]),
    ),
  };
}
