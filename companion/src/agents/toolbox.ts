import type { AgentSettings, ToolApproval, ToolClass } from '#shared/api/config.js';
import type { ToolInputSchema } from '#shared/api/bridge.js';
import type { ToolSpec } from '../inference/types.js';
import type { CatalogEntry } from '../tools/catalog.js';
import { agentLists, toolDecision } from '../tools/policy.js';
import { builtinTool } from '../tools/builtin/index.js';
import type { BuiltinTool } from '../tools/builtin/tool.js';

/** A tool an agent lists, with what its policy says about it. */
export interface AgentTool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  class: ToolClass;
  policy: ToolApproval;
  entry: CatalogEntry;
  /** Hearth's own implementation; none for an MCP service's tool. */
  builtin?: BuiltinTool;
}

/**
 * The tools of one agent: every catalog entry its `tools` names or globs match. Built-in file
 * and shell tools need a workspace: without one they are not the agent's at all. Denied tools
 * stay in the box (a call to one is answered "denied by policy") but are never offered.
 */
export function agentToolbox(agent: AgentSettings, entries: readonly CatalogEntry[]): Map<string, AgentTool> {
  const box = new Map<string, AgentTool>();
  for (const entry of entries) {
    if (!agentLists(agent, entry.name)) continue;
    const builtin = entry.service === null ? builtinTool(entry.name) : undefined;
    if (entry.service === null && !builtin) continue;
    if (builtin?.needsWorkspace && !agent.workspace) continue;
    box.set(entry.name, {
      name: entry.name,
      description: entry.description,
      inputSchema: entry.inputSchema,
      class: entry.class,
      policy: toolDecision(agent, entry.name, entry.class),
      entry,
      ...(builtin ? { builtin } : {}),
    });
  }
  return box;
}

/** What the model is offered: every tool of the box its policy does not deny. */
export function offeredTools(box: Map<string, AgentTool>): ToolSpec[] {
  return [...box.values()]
    .filter((tool) => tool.policy !== 'deny')
    .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema as ToolSpec['parameters'] }));
}
