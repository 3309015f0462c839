import type { KeyGrant } from '../access/keys.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { CatalogEntry } from './catalog.js';
import { agentLists, toolDecision } from '../agents/policy.js';
import { exposedUnder } from './classes.js';

/**
 * The catalog an external client (bridge, /mcp) may use. Never a built-in tool. A service's
 * tools only when it is enabled and its `expose` allows their class. A key scoped to an agent
 * narrows this further to the tools that agent lists (`agents[].tools`: exact names, or globs
 * such as `files_*`) that its tool_overrides or its class's tool_policy do not deny; a key
 * scoped to an agent that does not exist sees nothing.
 */
export function permittedTools(entries: readonly CatalogEntry[], config: ConfigDocument, grant: KeyGrant | null): CatalogEntry[] {
  const services = new Map(config.mcp_services.map((service) => [service.name, service]));
  const visible = entries.filter((entry) => {
    if (entry.hostOnly || entry.service === null) return false;
    const service = services.get(entry.service);
    return service !== undefined && service.enabled && exposedUnder(service.expose, entry.class);
  });
  if (!grant?.agent) return visible;
  const agent = config.agents.find((candidate) => candidate.id === grant.agent);
  if (!agent) return [];
  return visible.filter((entry) => agentLists(agent, entry.name) && toolDecision(agent, entry.name, entry.class) !== 'deny');
}

/** The permitted entry with this exposed name; undefined whether it is absent or forbidden (callers cannot tell). */
export function findPermitted(entries: readonly CatalogEntry[], config: ConfigDocument, grant: KeyGrant | null, name: string): CatalogEntry | undefined {
  return permittedTools(entries, config, grant).find((entry) => entry.name === name);
}
