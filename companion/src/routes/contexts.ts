/**
 * What each route family may use of the running server: one small interface per family, each
 * member narrowed to the methods its routes call, and `routeContexts()`, the one place they are
 * built from `Services`. A route test passes a hand-made object of the members its module picks
 * (`RoutePlugin<MediaContext>`, `RoutePlugin<AdminContext, 'keys'>`) instead of the whole server.
 *
 * Members the server replaces while it runs (the configuration, the model providers) are
 * functions, read at each use; the others are the long-lived objects themselves.
 */
import type { ConfigTarget } from '../config/apply.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { OllamaListenerStatus } from '#shared/api/admin.js';
import type { AdminCredential } from '../access/admin-credential.js';
import type { KeyStore } from '../access/keys.js';
import type { AgentDispatcher } from '../agents/dispatcher.js';
import type { AgentService } from '../agents/service.js';
import type { PairedHosts } from '../channel/device/hosts.js';
import type { ChannelHost } from '../channel/host/service.js';
import type { GenerationSources } from '../generation/generate.js';
import type { ImageService } from '../images/service.js';
import type { Embeddings } from '../inference/embeddings.js';
import type { Engine } from '../inference/engine.js';
import type { EngineMonitor } from '../inference/monitor.js';
import type { McpManager } from '../mcp/manager.js';
import type { Metrics } from '../metrics/metrics.js';
import type { MediaService } from '../media/service.js';
import type { MemoryService } from '../memory/service.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { DownloadManager } from '../models/downloads.js';
import type { ProviderClient } from '../providers/client.js';
import type { DataFolderWatch } from '../store/folder-watch.js';
import type { Services } from '../services.js';
import type { DataPaths } from '../store/data-dir.js';
import type { ResponseStore } from '../store/responses.js';

/** The configuration in force; a new document replaces it as a whole when a change is applied. */
type Config = () => ConfigDocument;

export interface HealthContext {
  version: string;
  /** Whether the data folder was deleted or moved while the companion ran. */
  dataFolder: Pick<DataFolderWatch, 'gone'>;
}

/** GET /metrics: the Prometheus text (the perimeter guards it). */
export interface MetricsContext {
  metrics: Pick<Metrics, 'render' | 'contentType'>;
}

/** /v1/models, chat completions, Responses, completions, embeddings: local models on the one generation path, provider models forwarded. */
export interface OpenaiContext {
  /** X-Service-Agent-Id names one of its agents. */
  config: Config;
  catalog: Pick<ModelCatalog, 'list' | 'resolve' | 'localRecord'>;
  /** What the generation path (generation/generate.ts) runs a local model with. */
  generation: GenerationSources;
  embeddings: Pick<Embeddings, 'embed'>;
  /** The model providers in force. */
  providers(): Pick<ProviderClient, 'forward'>;
  responses: Pick<ResponseStore, 'get' | 'delete' | 'conversation' | 'save' | 'inputItems'>;
  /** An attributed exchange becomes a turn of the agent's conversation. */
  agents: Pick<AgentService, 'attribute'>;
  /** Aborted when the server shuts down: streams and generations stop. */
  shutdown: AbortSignal;
}

/** Anthropic's Messages API (/v1/messages): local models and provider models through the one generation path. */
export interface AnthropicContext {
  /** X-Service-Agent-Id names one of its agents. */
  config: Config;
  /** What `resolveGenerator` runs a model with; its engine also counts a prompt's tokens. */
  generation: GenerationSources;
  /** An attributed exchange becomes a turn of the agent's conversation. */
  agents: Pick<AgentService, 'attribute'>;
  /** Aborted when the server shuts down: streams and generations stop. */
  shutdown: AbortSignal;
}

/** Ollama's API (/api): local models and provider models through the one generation path, embeddings, pulls from Hugging Face. */
export interface OllamaContext {
  version: string;
  /** models.idle_unload_seconds: when a loaded model is unloaded (GET /api/ps). */
  config: Config;
  catalog: Pick<ModelCatalog, 'list' | 'local' | 'resolve' | 'advice' | 'known'>;
  /** What `resolveGenerator` runs a model with. */
  generation: GenerationSources;
  engine: Pick<Engine, 'status' | 'load' | 'unload' | 'loadedModel'>;
  embeddings: Pick<Embeddings, 'embed'>;
  /** An `hf.co/…` name pulled; a pulled name resolves to the model its download produced. */
  downloads: Pick<DownloadManager, 'create' | 'get' | 'list' | 'subscribe'>;
  shutdown: AbortSignal;
}

/** /v1/images: models, jobs and the gallery. */
export interface ImagesContext {
  /** server.limits.images_body_mb bounds uploads. */
  config: Config;
  images: Pick<ImageService, 'models' | 'find' | 'generate' | 'edit' | 'upscale' | 'gallery' | 'job' | 'remove' | 'cancel' | 'resultFile'>;
  shutdown: AbortSignal;
}

/** /v1/media: hosted video by quote and confirmation. */
export interface MediaContext {
  config: Config;
  media: Pick<MediaService, 'providers' | 'quote' | 'confirm' | 'jobs' | 'job' | 'contentPath'>;
}

/** /agents: definitions, runs and their events, approvals. */
export interface AgentsContext {
  /** Where an agent id points: this machine, a paired host or a cloud workspace. */
  dispatcher: Pick<AgentDispatcher, 'list' | 'find' | 'start' | 'runs'>;
  agents: Pick<AgentService, 'get' | 'events' | 'follow' | 'cancel' | 'artifact' | 'approvals'>;
  /** The folder of the runs' artifact files. */
  artifacts: string;
  shutdown: AbortSignal;
}

/** /admin: loopback only, with the admin credential. */
export interface AdminContext {
  version: string;
  config: Config;
  /** What plan and apply change: everything of a `ConfigTarget` but the listening address, which the app knows. */
  configTarget: Omit<ConfigTarget, 'listening'>;
  paths: Pick<DataPaths, 'root' | 'models'>;
  /** The folders scanned for models, in order. */
  modelsDirs(): string[];
  engine: Pick<
    Engine,
    'status' | 'load' | 'unload' | 'memoryBudgetBytes' | 'engineStatus' | 'retryNativeBuild' | 'savedConversations' | 'clearSavedConversations'
  >;
  providers(): Pick<ProviderClient, 'status'>;
  catalog: Pick<ModelCatalog, 'resolve' | 'local' | 'externalSources'>;
  keys: Pick<KeyStore, 'create' | 'list' | 'revoke'>;
  admin: Pick<AdminCredential, 'redeem' | 'sessions' | 'issueLink' | 'acceptsToken' | 'acceptsSession'>;
  mcp: Pick<McpManager, 'status' | 'serviceStatus' | 'reconnect' | 'beginLogin' | 'finishLogin' | 'entries'>;
  /** The secure channel's host side: paired devices and pairing codes. */
  channel: Pick<ChannelHost, 'list' | 'status' | 'pairingCode' | 'revoke'>;
  /** The device side: the hosts this companion is paired with. */
  pairedHosts: Pick<PairedHosts, 'pair' | 'status' | 'settings' | 'forget'>;
  cloud: Services['cloud'];
  downloads: Pick<DownloadManager, 'list' | 'get' | 'create' | 'pause' | 'resume' | 'cancel' | 'subscribe'>;
  monitor: Pick<EngineMonitor, 'snapshot' | 'subscribe'>;
  /** The Ollama listener's state (server.ollama): off, listening, or refused and why. */
  ollamaListener(): OllamaListenerStatus;
  /** Restarting the companion (POST /admin/restart); absent where no `hearth serve` could start it again. */
  restart?: Restarter;
  /** When this companion finished starting, every listener open (ISO 8601); undefined while it still starts. */
  startedAt(): string | undefined;
  shutdown: AbortSignal;
}

/** What `hearth serve` gives the restart route: where the companion answers again, and the restart itself. */
export interface Restarter {
  /** The address it listens on again (the same, unless the configured port changed). */
  url(): string;
  /** Stops it as Ctrl+C does and starts it again; called once the route's answer is sent. */
  begin(): void;
  /** When it finished starting (its listeners, the secure channel's included, are open); undefined until then. */
  startedAt(): string | undefined;
}

/** /memory: ingestion and recall, browsing and editing, index operations. */
export interface MemoryContext {
  /** server.limits.memory_body_mb bounds bodies. */
  config: Config;
  memory: Pick<
    MemoryService,
    'ingest' | 'recordDelegated' | 'flush' | 'search' | 'recall' | 'consolidate' | 'browse' | 'rebuildIndex' | 'removeIndex' | 'purge'
  >;
}

/** /mcp: the tool bridge and the MCP endpoint. */
export interface McpContext {
  version: string;
  /** The agents' tool policies and server.limits.tools_body_mb. */
  config: Config;
  mcp: McpManager;
  shutdown: AbortSignal;
}

/** The secure channel's listener: pairing, and the agents a paired device was granted. */
export interface ChannelContext {
  version: string;
  dataFolder: Pick<DataFolderWatch, 'gone'>;
  config: Config;
  channel: Pick<ChannelHost, 'pair' | 'devices'>;
  agents: Pick<AgentService, 'start' | 'get' | 'events' | 'follow' | 'cancel'>;
  shutdown: AbortSignal;
}

export interface WebContext {
  /** Folder of the built PWA (build/web), served at /. */
  webRoot: string;
}

export interface RouteContexts {
  health: HealthContext;
  metrics: MetricsContext;
  openai: OpenaiContext;
  anthropic: AnthropicContext;
  ollama: OllamaContext;
  images: ImagesContext;
  media: MediaContext;
  agents: AgentsContext;
  admin: AdminContext;
  memory: MemoryContext;
  mcp: McpContext;
  channel: ChannelContext;
  web: WebContext;
}

/** Every family's context, from the services of this process. */
export function routeContexts(
  services: Services,
  webRoot = '',
  ollamaListener: () => OllamaListenerStatus = () => ({ state: 'off' }),
  restart?: Restarter,
): RouteContexts {
  const { version, shutdown, catalog, engine, agents, mcp } = services;
  const config = () => services.config;
  const builtAt = new Date().toISOString();
  const generation = { catalog, engine, providers: () => services.providers, remoteImages: () => services.config.models.remote_images };
  return {
    health: { version, dataFolder: services.dataFolder },
    metrics: { metrics: services.metrics },
    openai: {
      config,
      catalog,
      generation,
      embeddings: services.embeddings,
      providers: () => services.providers,
      responses: services.responses,
      agents,
      shutdown,
    },
    anthropic: { config, generation, agents, shutdown },
    ollama: {
      version,
      config,
      catalog,
      generation,
      engine,
      embeddings: services.embeddings,
      downloads: services.downloads,
      shutdown,
    },
    images: { config, images: services.images, shutdown },
    media: { config, media: services.media },
    agents: { dispatcher: services.dispatcher, agents, artifacts: services.paths.artifacts, shutdown },
    admin: {
      version,
      config,
      configTarget: configTarget(services),
      paths: services.paths,
      modelsDirs: () => services.modelsDirs,
      engine,
      providers: () => services.providers,
      catalog,
      keys: services.keys,
      admin: services.admin,
      mcp,
      channel: services.channel,
      pairedHosts: services.pairedHosts,
      cloud: services.cloud,
      downloads: services.downloads,
      monitor: services.monitor,
      ollamaListener,
      ...(restart ? { restart } : {}),
      startedAt: restart ? () => restart.startedAt() : () => builtAt,
      shutdown,
    },
    memory: { config, memory: services.memory },
    mcp: { version, config, mcp, shutdown },
    channel: { version, dataFolder: services.dataFolder, config, channel: services.channel, agents, shutdown },
    web: { webRoot },
  };
}

/** What plan and apply need of the running server (routes that change one section use it too). */
function configTarget(services: Services): AdminContext['configTarget'] {
  return {
    current: () => services.config,
    path: services.paths.config,
    db: services.db,
    resolves: (reference) => services.secrets.resolve(reference) !== undefined,
    localModelIds: async () => (await services.catalog.local(true)).map((model) => model.id),
    activeKeys: () => services.keys.activeCount(),
    toolClass: (name) => services.mcp.catalog.get(name)?.class,
    loadedModels: () => services.engine.status().map((model) => model.id),
    reconfigure: (next) => services.reconfigure(next),
  };
}
