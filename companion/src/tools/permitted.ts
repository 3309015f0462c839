import type { KeyGrant } from '../access/keys.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { CatalogEntry } from './catalog.js';
import { agentLists, toolDecision } from './policy.js';
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

/**
 * Whether this caller may see a service's resources, prompts and log messages. They only read,
 * so they follow the service's `expose` like read tools (`read` or `all`; never `none`); a key
 * scoped to an agent sees them only when the agent lists the whole service (`<service>_*` or `*`)
 * and its tool_policy does not deny reads.
 */
export function serviceOffered(config: ConfigDocument, grant: KeyGrant | null, service: string): boolean {
  const settings = config.mcp_services.find((candidate) => candidate.name === service);
  if (!settings?.enabled || !exposedUnder(settings.expose, 'read')) return false;
  if (!grant?.agent) return true;
  const agent = config.agents.find((candidate) => candidate.id === grant.agent);
  return agent !== undefined && agent.tool_policy.read !== 'deny' && agent.tools.some((pattern) => pattern === '*' || pattern === `${service}_*`);
}
