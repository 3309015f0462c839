import type { JsonSchema } from '#shared/api/openai.js';
import type { MemorySearchScope } from '#shared/api/memory.js';
import type { MemoryService } from './service.js';

/** The agent a tool call runs for: memory tools only ever reach this agent's namespace. */
export interface ToolScope {
  agentId: string;
}

/** An MCP-shaped tool result: failures are data (`isError`), not exceptions. */
export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** A built-in tool definition, plain enough for the agents and MCP work to register as it is. */
export interface BuiltinTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** read: no side effects; write: changes stored state. */
  class: 'read' | 'write';
  run(args: Record<string, unknown>, scope: ToolScope): Promise<ToolResult>;
}

const searchSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, description: 'Words to look for; plain language works.' },
    limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Most results to return (default 5).' },
  },
};

const MATERIALS: { scope: MemorySearchScope; name: string; what: string }[] = [
  { scope: 'pinned', name: 'memory_search_pinned', what: 'pinned facts (durable facts kept across sessions)' },
  { scope: 'episodes', name: 'memory_search_episodes', what: 'episodes (summaries of past sessions, with topics and decisions)' },
  { scope: 'transcript', name: 'memory_search_transcript', what: 'the transcript (past conversation turns, word for word)' },
];

/** Memory tools for agents (docs/memory.md rule 8): one search per material, and pin. */
export function memoryTools(memory: MemoryService): BuiltinTool[] {
  const searches = MATERIALS.map(({ scope, name, what }): BuiltinTool => ({
    name,
    description: `Search this agent's memory: ${what}. Returns the best matches with their dates.`,
    inputSchema: searchSchema,
    class: 'read',
    async run(args, toolScope) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return failure('query must be a non-empty string.');
      const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(20, Math.max(1, args.limit)) : 5;
      return attempt(async () => {
        const items = await memory.search(toolScope.agentId, query, scope, limit);
        const text = items.length === 0 ? 'No matches.' : items.map((item) => `${item.date ? `[${item.date.slice(0, 10)}] ` : ''}${item.text}`).join('\n---\n');
        return { text, structured: { items } };
      });
    },
  }));
  const pin: BuiltinTool = {
    name: 'memory_pin',
    description: "Pin a fact to this agent's memory so it is kept across sessions. State one fact in one short sentence.",
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string', minLength: 1, maxLength: 2000, description: 'The fact, e.g. "Ana prefers tea to coffee."' } },
    },
    class: 'write',
    async run(args, toolScope) {
      if (typeof args.text !== 'string' || !args.text.trim()) return failure('text must be a non-empty string.');
      const text = args.text;
      return attempt(() => {
        const pinned = memory.editor.pin(toolScope.agentId, text);
        return {
          text: pinned.merged ? `Already known; pinned fact_${pinned.id}.` : `Pinned as fact_${pinned.id}.`,
          structured: { id: `fact_${pinned.id}`, merged: pinned.merged },
        };
      });
    },
  };
  return [...searches, pin];
}

/** Registers every memory tool with a registry (the agents' or the MCP catalog's). */
export function registerMemoryTools(register: (tool: BuiltinTool) => void, memory: MemoryService): void {
  for (const tool of memoryTools(memory)) register(tool);
}

async function attempt(
  work: () => { text: string; structured: Record<string, unknown> } | Promise<{ text: string; structured: Record<string, unknown> }>,
): Promise<ToolResult> {
  try {
    const { text, structured } = await work();
    return { content: [{ type: 'text', text }], structuredContent: structured, isError: false };
  } catch (error) {
    return failure(error instanceof Error ? error.message : String(error));
  }
}

function failure(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
