import type { AgentSettings, ToolApproval, ToolClass } from '#shared/api/config.js';

/**
 * Whether a tool name matches one entry of an agent's `tools`: an exact name, or a glob where
 * `*` stands for any run of characters and `?` for one (`everything_*`, `*_read_*`).
 */
export function matchesToolPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === name;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(name);
}

/** Whether the agent lists this tool (by name or glob). */
export function agentLists(agent: Pick<AgentSettings, 'tools'>, name: string): boolean {
  return agent.tools.some((pattern) => matchesToolPattern(pattern, name));
}

/** What the agent may do with one tool: its override when it has one, else its class's policy. */
export function toolDecision(agent: Pick<AgentSettings, 'tool_policy' | 'tool_overrides'>, name: string, kind: ToolClass): ToolApproval {
  return agent.tool_overrides?.[name] ?? agent.tool_policy[kind];
}
