import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolClass } from '#shared/api/config.js';
import type { DiscoveredTool } from '../tools/catalog.js';
import { toolClass } from '../tools/classes.js';
import { ConnectFailure } from './failures.js';
import { SchemaCompiler } from '../tools/schemas.js';

/** Most tools read from one service (pages are followed until then). */
const MAX_TOOLS = 10_000;

/** The service's whole tool list, following pagination; a list that is not valid MCP is a schema failure. */
export async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    let page;
    try {
      page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    } catch (error) {
      if (error instanceof Error && (error.name === 'ZodError' || 'issues' in error)) {
        throw new ConnectFailure('schema', `The service's tool list is not valid MCP: ${summariseIssues(error)}`);
      }
      if (error instanceof Error && /output schema|validator/i.test(error.message))
        throw new ConnectFailure('schema', `A tool's schema cannot be used: ${error.message}`);
      throw error;
    }
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor && tools.length < MAX_TOOLS);
  return tools;
}

/** Splits a tool list into tools whose argument schema compiles and a problem per other tool. */
export function usableTools(tools: Tool[]): { usable: Tool[]; problems: string[] } {
  const compiler = new SchemaCompiler();
  const usable: Tool[] = [];
  const problems: string[] = [];
  for (const tool of tools) {
    try {
      compiler.compile(tool.inputSchema);
      usable.push(tool);
    } catch (error) {
      problems.push(`${tool.name}: ${(error as Error).message.slice(0, 300)}`);
    }
  }
  return { usable, problems };
}

/** Why a tool list cannot be used at all (zero_tools, schema), or undefined when some tools can. */
export function unusableList(tools: Tool[]): ConnectFailure | undefined {
  if (tools.length === 0) return new ConnectFailure('zero_tools', 'The service lists no tools.');
  const { usable, problems } = usableTools(tools);
  if (usable.length === 0)
    return new ConnectFailure('schema', `None of the service's ${tools.length} tool(s) has a usable argument schema: ${problems.join('; ')}`);
  return undefined;
}

/** Catalog entries for usable tools, classed from their annotations and the service's overrides. */
export function discovered(tools: Tool[], overrides: Record<string, ToolClass>): DiscoveredTool[] {
  const compiler = new SchemaCompiler();
  return tools.map((tool) => ({
    tool: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description ?? '',
    inputSchema: tool.inputSchema as DiscoveredTool['inputSchema'],
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    class: toolClass(tool.annotations, overrides[tool.name]),
    validate: compiler.compile(tool.inputSchema),
  }));
}

function summariseIssues(error: Error): string {
  const issues = (error as { issues?: { path?: unknown[]; message?: string }[] }).issues;
  if (!Array.isArray(issues)) return error.message.slice(0, 300);
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).join('.') || '(list)'}: ${issue.message ?? 'invalid'}`)
    .join('; ');
}
