import type { AgentSettings, ConfigDocument, ToolClass } from '#shared/api/config.js';
import type { ConfigChange, ConfigRisk } from '#shared/api/admin-config.js';
import { isLoopbackBind } from '../access/hosts.js';
import { agentLists, toolDecision } from '../tools/policy.js';
import { builtinTool } from '../tools/builtin/index.js';
import { referencesIn, secretDestinations, signInDestinations } from './destinations.js';

/** The high-risk parts of a change: each needs confirm_high_risk before it is applied. */
export function findRisks(
  before: ConfigDocument,
  after: ConfigDocument,
  changes: ConfigChange[],
  toolClass: (name: string) => ToolClass | undefined = () => undefined,
): ConfigRisk[] {
  const risks: ConfigRisk[] = [];
  const add = (code: string, path: string, message: string) => risks.push({ level: 'high', code, path, message });

  if (!isLoopbackBind(after.server.host) && after.server.host !== before.server.host) {
    add('listen_beyond_loopback', 'server.host', `The server would listen on ${after.server.host}, reachable from other machines.`);
  }
  if (before.server.auth.required && !after.server.auth.required) add('auth_disabled', 'server.auth.required', 'Access keys would no longer be required.');
  const newOrigins = after.server.cors.origins.filter((origin) => !before.server.cors.origins.includes(origin));
  if (newOrigins.length > 0) add('cors_widened', 'server.cors.origins', `Web pages from ${newOrigins.join(', ')} could call Hearth from a browser.`);
  const newHosts = after.server.allowed_hosts.filter((host) => !before.server.allowed_hosts.includes(host));
  if (newHosts.length > 0) add('hosts_widened', 'server.allowed_hosts', `Requests naming ${newHosts.join(', ')} would be accepted.`);

  for (const change of changes) {
    if (change.action === 'delete') add('prune_delete', `${change.section}.${change.target}`, `${change.section} "${change.target}" would be deleted.`);
  }
  for (const change of changes.filter((entry) => entry.section === 'mcp_services' && entry.action !== 'delete')) {
    const service = after.mcp_services.find((entry) => entry.name === change.target);
    // Every field of a stdio service decides what runs (env: NODE_OPTIONS, LD_PRELOAD, PATH; cwd; args),
    // except the few that only switch it on or off or time it; what callers see is judged below.
    const runs = change.fields.some((field) => !STDIO_FIELDS_THAT_RUN_NOTHING.includes(field.split('.')[0]!));
    if (service?.transport === 'stdio' && (change.action === 'create' || runs)) {
      add('runs_local_command', `mcp_services.${change.target}`, `The MCP service "${change.target}" would run a local command: ${service.command ?? ''}.`);
    }
  }
  for (const service of after.mcp_services) {
    const previous = before.mcp_services.find((entry) => entry.name === service.name)?.tool_classes ?? {};
    for (const tool of new Set([...Object.keys(previous), ...Object.keys(service.tool_classes)])) {
      const now = service.tool_classes[tool];
      if (!widens(previous[tool], now)) continue;
      add(
        'tool_class_widened',
        `mcp_services.${service.name}.tool_classes.${tool}`,
        `The tool "${tool}" of "${service.name}" would count as ${now ?? 'its annotated class'}${previous[tool] ? ` instead of ${previous[tool]}` : ''}: external clients (expose: ${service.expose}) and agents' tool_policy would treat it as less dangerous.`,
      );
    }
  }
  const usedBefore = referencesIn(before);
  const sentBefore = secretDestinations(before);
  for (const pair of secretDestinations(after)) {
    const [reference, origin] = pair.split(' -> ') as [string, string];
    if (sentBefore.has(pair) || !usedBefore.has(reference)) continue;
    add('secret_sent_to_new_host', reference, `${reference} would be sent to ${origin}, a host it was not sent to before.`);
  }
  // A workspace's sign-in outlives edits to it: re-pointing its cards or directory sends its token to the new origin.
  const signedBefore = signInDestinations(before);
  for (const [workspace, origins] of signInDestinations(after)) {
    const previous = signedBefore.get(workspace);
    if (!previous) continue;
    for (const origin of origins) {
      if (previous.has(origin)) continue;
      add(
        'secret_sent_to_new_host',
        `cloud_workspaces.${workspace}`,
        `The sign-in of cloud workspace "${workspace}" (its access token) would be sent to ${origin}, a host it was not sent to before.`,
      );
    }
  }
  for (const service of after.mcp_services ?? []) {
    const previous = before.mcp_services?.find((entry) => entry.name === service.name);
    if (service.expose === 'all' && previous?.expose !== 'all') {
      add(
        'exposes_write_tools',
        `mcp_services.${service.name}.expose`,
        `External clients (bridge, /mcp) would see and call every tool of "${service.name}", including write and exec tools.`,
      );
    }
  }
  for (const agent of after.agents) {
    const previous = before.agents.find((entry) => entry.id === agent.id)?.tool_policy;
    for (const kind of ['write', 'exec'] as const) {
      const now = agent.tool_policy[kind];
      const was = previous?.[kind] ?? 'deny';
      if (now !== 'deny' && was === 'deny')
        add(
          `grants_${kind}`,
          `agents.${agent.id}.tool_policy.${kind}`,
          `Agent "${agent.id}" would be allowed ${kind === 'write' ? 'file-write' : 'shell/exec'} tools.`,
        );
      if (now === 'auto' && was !== 'auto')
        add('automatic_approval', `agents.${agent.id}.tool_policy.${kind}`, `Agent "${agent.id}" would run ${kind} tools without asking.`);
    }
  }
  const channel = after.server.remote;
  if (channel.enabled && (!before.server.remote.enabled || channel.host !== before.server.remote.host))
    add(
      'remote_channel',
      'server.remote',
      `Other machines could pair with this host and run the agents granted to them, over TLS on ${channel.host}:${channel.port}.`,
    );
  for (const agent of after.agents)
    risks.push(
      ...agentToolRisks(
        before.agents.find((entry) => entry.id === agent.id),
        agent,
        toolClass,
      ),
    );
  if (after.images.hosted.enabled && !before.images.hosted.enabled)
    add('paid_spend', 'images.hosted.enabled', 'Paid hosted media generation would be enabled.');
  for (const change of changes.filter((entry) => entry.section === 'media_providers' && entry.action !== 'delete')) {
    if (change.action === 'create' || change.fields.some((field) => ['base_url', 'api_key', 'models'].includes(field)))
      add('paid_target', `media_providers.${change.target}`, `Hosted media could be sent to "${change.target}", a paid service.`);
  }
  return risks;
}

const FILE_TOOLS = ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file', 'shell'];

/**
 * Per-tool overrides that lift a write or exec tool out of deny, or make it automatic, and a
 * workspace (new or moved) the agent's file tools could reach. A tool whose class is unknown
 * (its service is not connected) counts as write, MCP's default for a tool without hints.
 */
function agentToolRisks(previous: AgentSettings | undefined, agent: AgentSettings, toolClass: (name: string) => ToolClass | undefined): ConfigRisk[] {
  const risks: ConfigRisk[] = [];
  const add = (code: string, path: string, message: string) => risks.push({ level: 'high', code, path, message });
  for (const name of Object.keys(agent.tool_overrides ?? {})) {
    const kind = toolClass(name) ?? builtinTool(name)?.class ?? 'write';
    if (kind !== 'write' && kind !== 'exec') continue;
    const now = toolDecision(agent, name, kind);
    const was = previous ? toolDecision(previous, name, kind) : 'deny';
    const path = `agents.${agent.id}.tool_overrides.${name}`;
    if (now !== 'deny' && was === 'deny') add(`grants_${kind}`, path, `Agent "${agent.id}" would be allowed the ${kind} tool "${name}".`);
    if (now === 'auto' && was !== 'auto') add('automatic_approval', path, `Agent "${agent.id}" would run the ${kind} tool "${name}" without asking.`);
  }
  const usesFiles = FILE_TOOLS.some((name) => agentLists(agent, name) && toolDecision(agent, name, builtinTool(name)!.class) !== 'deny');
  if (agent.workspace && usesFiles && agent.workspace !== previous?.workspace)
    add('grants_workspace', `agents.${agent.id}.workspace`, `Agent "${agent.id}" would reach the files under ${agent.workspace} with its file tools.`);
  return risks;
}

/** Fields of a stdio service that change neither what runs nor what callers see. */
const STDIO_FIELDS_THAT_RUN_NOTHING = ['name', 'enabled', 'auto_connect', 'discovery_timeout_ms', 'tool_call_timeout_ms', 'expose', 'tool_classes'];

/** Classes from most to least permitted: exposed under expose: read, and agents' default policies (read auto, network ask, write and exec deny). */
const PERMISSIVENESS = ['read', 'network', 'write', 'exec'];

/**
 * Whether a tool_classes override change lets more callers use a tool. Without an override a
 * tool has its annotated class, unknown here: taken as write (what an unannotated tool is), so
 * an override to read or network counts as widening, and removing an exec override too.
 */
function widens(before: ToolClass | undefined, after: ToolClass | undefined): boolean {
  if (before === after) return false;
  const rank = (kind: ToolClass | undefined) => PERMISSIVENESS.indexOf(kind ?? 'write');
  if (after === undefined) return rank(before) > rank('read');
  return rank(after) < rank(before);
}
