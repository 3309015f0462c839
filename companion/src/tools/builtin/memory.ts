import type { MemorySearchScope } from '#shared/api/memory.js';
import { failure, success } from '../result.js';
import { attempt, checkCancelled, toolInput, untilCancelled, type BuiltinTool } from './tool.js';

const searchSchema = toolInput(['query'], {
  query: { type: 'string', minLength: 1, description: 'Words to look for; plain language works.' },
  limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Most results to return (default 5).' },
});

const MATERIALS: { scope: MemorySearchScope; name: string; what: string }[] = [
  { scope: 'pinned', name: 'memory_search_pinned', what: 'pinned facts (durable facts kept across sessions)' },
  { scope: 'episodes', name: 'memory_search_episodes', what: 'episodes (summaries of past sessions, with topics and decisions)' },
  { scope: 'transcript', name: 'memory_search_transcript', what: 'the transcript (past conversation turns, word for word)' },
];

/**
 * Memory tools for agents (docs/memory.md rule 8): one search per material (the separate
 * entry points for pinned facts, episodes and transcript), and pin. They act only on the
 * memory of the agent the run is for (`context.agentId`); an argument cannot widen that.
 */
export const MEMORY_TOOLS: readonly BuiltinTool[] = [
  ...MATERIALS.map(({ scope, name, what }): BuiltinTool => ({
    name,
    description: `Search this agent's memory: ${what}. Returns the best matches with their dates.`,
    inputSchema: searchSchema,
    class: 'read',
    hostOnly: false,
    needsWorkspace: false,
    async run(args, context) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return failure('query must be a non-empty string.');
      const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(20, Math.max(1, args.limit)) : 5;
      return attempt(async () => {
        // A search may wait on an embedding model; a cancelled run does not wait for it.
        const items = await untilCancelled(context.signal, context.memory.search(context.agentId, query, scope, limit));
        const text = items.length === 0 ? 'No matches.' : items.map((item) => `${item.date ? `[${item.date.slice(0, 10)}] ` : ''}${item.text}`).join('\n---\n');
        return success(text, { items });
      });
    },
  })),
  {
    name: 'memory_pin',
    description: "Pin a fact to this agent's memory so it is kept across sessions. State one fact in one short sentence.",
    inputSchema: toolInput(['text'], { text: { type: 'string', minLength: 1, maxLength: 2000, description: 'The fact, e.g. "Ana prefers tea to coffee."' } }),
    class: 'write',
    hostOnly: false,
    needsWorkspace: false,
    async run(args, context) {
      if (typeof args.text !== 'string' || !args.text.trim()) return failure('text must be a non-empty string.');
      const text = args.text;
      return attempt(() => {
        checkCancelled(context.signal);
        const pinned = context.memory.editor.pin(context.agentId, text);
        return success(pinned.merged ? `Already known; pinned fact_${pinned.id}.` : `Pinned as fact_${pinned.id}.`, {
          id: `fact_${pinned.id}`,
          merged: pinned.merged,
        });
      });
    },
  },
];
