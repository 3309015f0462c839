import { AGENT_ID_PATTERN } from '#shared/api/agents.js';

/**
 * Where an agent id points, with the id it was read from. Local agents' ids have neither "/" nor
 * ":"; a paired host's agent is `<host>/<agent>`; a cloud workspace's published agent is
 * `cloud:<workspace>/<agent>`.
 */
export type AgentTarget = LocalTarget | HostTarget | CloudTarget;
export type LocalTarget = { kind: 'local'; id: string; agent: string };
export type HostTarget = { kind: 'host'; id: string; host: string; agent: string };
export type CloudTarget = { kind: 'cloud'; id: string; workspace: string; agent: string };

/** A paired host's or cloud workspace's name, as the configuration takes it. */
const PLACE = '[a-z0-9][a-z0-9._-]{0,63}';
const AGENT = AGENT_ID_PATTERN.slice(1, -1);

/** Every id an agents route takes: local, `<host>/<agent>` or `cloud:<workspace>/<agent>` (for route schemas). */
export const ANY_AGENT_ID_PATTERN = `^(?:${AGENT}|${PLACE}/${AGENT}|cloud:${PLACE}/${AGENT})$`;

const local = new RegExp(`^${AGENT}$`);
const host = new RegExp(`^(${PLACE})/(${AGENT})$`);
const cloud = new RegExp(`^cloud:(${PLACE})/(${AGENT})$`);

/**
 * The one parser of agent ids. The agent dispatcher (agents/dispatcher.ts) is its only caller:
 * the perimeter checks a key's agent scope on the dispatcher's answer, and the agents routes run
 * where it says, so both always agree on what an id names. Undefined for anything that is not an
 * agent id (an id still percent-encoded, an empty workspace, a stray "/").
 */
export function agentTarget(id: string): AgentTarget | undefined {
  if (local.test(id)) return { kind: 'local', id, agent: id };
  const onHost = host.exec(id);
  if (onHost) return { kind: 'host', id, host: onHost[1]!, agent: onHost[2]! };
  const published = cloud.exec(id);
  if (published) return { kind: 'cloud', id, workspace: published[1]!, agent: published[2]! };
  return undefined;
}

/**
 * Whether a key scoped to `scope` (a local agent id; null: any agent) may use the agent `target`
 * points to (undefined: no agent id at all). A scoped key uses exactly its own local agent: never
 * `<host>/…` or `cloud:…`, even when the host or workspace carries the same name.
 */
export function scopeAllowsAgent(scope: string | null | undefined, target: AgentTarget | undefined): boolean {
  if (!scope) return true;
  return target?.kind === 'local' && target.agent === scope;
}
