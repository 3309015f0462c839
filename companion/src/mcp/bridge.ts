import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { KeyGrant } from '../access/keys.js';
import { HearthError } from '../errors.js';
import type { BridgeTool } from '#shared/api/bridge.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { argumentsProblem } from './arguments.js';
import type { CatalogEntry } from '../tools/catalog.js';
import type { McpManager } from './manager.js';
import { findPermitted, permittedTools } from '../tools/permitted.js';
import type { ArgumentProblem } from '../tools/schemas.js';

/** Who is asking: the configuration in force and the caller's key (null without a key). */
export interface ToolCaller {
  manager: McpManager;
  config: ConfigDocument;
  grant: KeyGrant | null;
}

/** GET /mcp/tools: the catalog this caller may use. */
export function listTools(caller: ToolCaller): BridgeTool[] {
  return permitted(caller).map((entry) => ({ name: entry.name, description: entry.description, inputSchema: entry.inputSchema }));
}

/** The same catalog as MCP `Tool` objects (the /mcp endpoint), with title, annotations and output schema. */
export function listMcpTools(caller: ToolCaller): Tool[] {
  return permitted(caller).map((entry) => ({
    name: entry.name,
    ...(entry.title ? { title: entry.title } : {}),
    description: entry.description,
    inputSchema: entry.inputSchema as Tool['inputSchema'],
    ...(entry.outputSchema ? { outputSchema: entry.outputSchema as Tool['outputSchema'] } : {}),
    ...(entry.annotations ? { annotations: entry.annotations } : {}),
  }));
}

/**
 * The permitted tool with this name. A tool that exists but is not permitted (hidden by
 * `expose`, host-only, outside the key's agent) is reported exactly like one that does not
 * exist: 404 tool_not_found, same message.
 */
export function permittedTool(caller: ToolCaller, name: string): CatalogEntry {
  const entry = findPermitted(caller.manager.entries(), caller.config, caller.grant, name);
  if (!entry)
    throw new HearthError('tool_not_found', `No tool named "${name}" is available to this caller. List tools with GET /mcp/tools.`, { param: 'name' });
  return entry;
}

/** Problems of arguments against the tool's schema (empty when they are valid). */
export function argumentProblems(entry: CatalogEntry, args: Record<string, unknown>): ArgumentProblem[] {
  return entry.validate(args);
}

/** POST /mcp/call: checks permission and arguments, then runs the tool (failures are `isError` results). */
export async function callTool(caller: ToolCaller, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
  const entry = permittedTool(caller, name);
  const bound = argumentsProblem(args);
  if (bound) throw new HearthError('invalid_request_error', bound, { param: 'arguments' });
  const problems = argumentProblems(entry, args);
  if (problems.length > 0) {
    const summary = problems.map((problem) => `${problem.path} ${problem.message}`).join('; ');
    throw new HearthError('invalid_request_error', `The arguments do not match the schema of "${name}": ${summary}.`, {
      param: problems[0]!.path,
      details: { problems },
    });
  }
  return caller.manager.call(entry, args, signal);
}

function permitted(caller: ToolCaller): CatalogEntry[] {
  return permittedTools(caller.manager.entries(), caller.config, caller.grant);
}
