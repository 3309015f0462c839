import type { ToolClass } from '#shared/api/config.js';
import type { ToolInputSchema } from '#shared/api/bridge.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import type { BuiltinTool } from './builtin/tool.js';
import type { ToolHints } from './classes.js';
import { assignNames, type NameRequest } from './names.js';
import { SchemaCompiler, type ArgumentValidator } from './schemas.js';

/** A tool as a service described it, with its class decided and its argument schema compiled. */
export interface DiscoveredTool {
  tool: string;
  title?: string;
  description: string;
  inputSchema: ToolInputSchema;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolHints & Record<string, unknown>;
  class: ToolClass;
  validate: ArgumentValidator;
}

/** One entry of the whole catalog: what Hearth's agents could use. External callers see a filtered view. */
export interface CatalogEntry extends DiscoveredTool {
  /** The exposed name, unique in the catalog. */
  name: string;
  /** The service it comes from; null for Hearth's built-in tools. */
  service: string | null;
  hostOnly: boolean;
}

/**
 * The tool catalog: Hearth's built-in tools under protected names, plus every connected
 * service's tools as `<service>_<tool>`. A service's tools are replaced as a whole; listeners
 * hear about every change.
 */
export class ToolCatalog {
  private readonly builtins = new Map<string, CatalogEntry>();
  private readonly services = new Map<string, DiscoveredTool[]>();
  private entries: CatalogEntry[] = [];
  private byName = new Map<string, CatalogEntry>();
  private readonly listeners = new Set<() => void>();

  constructor(builtins: readonly Pick<BuiltinTool, 'name' | 'description' | 'inputSchema' | 'class' | 'hostOnly'>[] = BUILTIN_TOOLS) {
    const compiler = new SchemaCompiler();
    for (const tool of builtins) {
      const { name, description, inputSchema, hostOnly } = tool;
      this.builtins.set(name, {
        name,
        tool: name,
        description,
        inputSchema,
        class: tool.class,
        hostOnly,
        service: null,
        validate: compiler.compile(inputSchema),
      });
    }
    this.rebuild();
  }

  /** Names no service tool may ever take. */
  get protectedNames(): ReadonlySet<string> {
    return new Set(this.builtins.keys());
  }

  /** Replaces everything a service contributed, at once (a refresh never merges). */
  replaceService(service: string, tools: DiscoveredTool[]): void {
    this.services.set(service, tools);
    this.rebuild();
  }

  removeService(service: string): void {
    if (this.services.delete(service)) this.rebuild();
  }

  all(): readonly CatalogEntry[] {
    return this.entries;
  }

  get(name: string): CatalogEntry | undefined {
    return this.byName.get(name);
  }

  forService(service: string): CatalogEntry[] {
    return this.entries.filter((entry) => entry.service === service);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private rebuild(): void {
    const requests: (NameRequest & { discovered: DiscoveredTool })[] = [];
    for (const [service, tools] of [...this.services].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const discovered of tools) requests.push({ service, tool: discovered.tool, discovered });
    }
    const names = assignNames(requests, this.protectedNames);
    const entries: CatalogEntry[] = [...this.builtins.values()];
    for (const request of requests) entries.push({ ...request.discovered, name: names.get(request)!, service: request.service, hostOnly: false });
    this.entries = entries;
    this.byName = new Map(entries.map((entry) => [entry.name, entry]));
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A listener's failure must not stop the catalog from changing.
      }
    }
  }
}
