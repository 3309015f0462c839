import type { McpServiceSettings, ToolClass } from '#shared/api/config.js';

/** The MCP tool annotations Hearth reads (all optional hints from the service). */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * The class of a discovered tool. An override from `tool_classes` wins. Otherwise only a tool
 * that declares `readOnlyHint: true` is read (network when it also declares `openWorldHint:
 * true`); everything else is write, including unannotated tools, because MCP's defaults for a
 * missing hint are "not read-only, destructive". MCP has no hint for running commands: exec is
 * only ever assigned by an override (or by Hearth's own built-in tools).
 */
export function toolClass(hints: ToolHints | undefined, override?: ToolClass): ToolClass {
  if (override) return override;
  if (hints?.readOnlyHint === true) return hints.openWorldHint === true ? 'network' : 'read';
  return 'write';
}

/** Whether external clients (bridge, /mcp) may see a tool of this class from a service with this `expose`. */
export function exposedUnder(expose: McpServiceSettings['expose'], kind: ToolClass): boolean {
  if (expose === 'all') return true;
  if (expose === 'read') return kind === 'read' || kind === 'network';
  return false;
}
