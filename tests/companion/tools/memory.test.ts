import { describe, expect, it } from 'vitest';
import { MEMORY_TOOLS } from '../../../companion/src/tools/builtin/memory.js';
import type { ToolContext } from '../../../companion/src/tools/builtin/tool.js';
import type { MemoryService } from '../../../companion/src/memory/service.js';
import { memoryService, scriptedModels } from '../memory/helpers.js';

function context(memory: MemoryService, agentId: string): ToolContext {
  return { agentId, memory, workspace: null, signal: new AbortController().signal, shellTimeoutSeconds: 1 };
}

describe('memory tools for agents (docs/memory.md rule 8)', () => {
  it('pins and searches only within the calling agent’s scope', async () => {
    const { memory } = memoryService(scriptedModels());
    const tools = Object.fromEntries(MEMORY_TOOLS.map((tool) => [tool.name, tool]));
    await memory.ingest({ agentId: 'ana', conversationId: 'c', turns: [{ user: 'I bought a red kayak.', assistant: 'Fun!' }], skipExtraction: true });
    const pinned = await tools.memory_pin!.run({ text: 'Ana owns a red kayak.' }, context(memory, 'ana'));
    expect(pinned).toMatchObject({ isError: false, structuredContent: { merged: false } });
    expect(pinned.content[0]!.text).toMatch(/^Pinned as fact_\d+\.$/);

    const facts = await tools.memory_search_pinned!.run({ query: 'kayak' }, context(memory, 'ana'));
    expect(facts.content[0]!.text).toContain('Ana owns a red kayak.');
    const transcript = await tools.memory_search_transcript!.run({ query: 'kayak', limit: 3 }, context(memory, 'ana'));
    expect(transcript.content[0]!.text).toContain('user: I bought a red kayak.');
    // an agent_id argument cannot widen scope: it is not part of the schema and is ignored
    const other = await tools.memory_search_transcript!.run({ query: 'kayak', agent_id: 'ana' }, context(memory, 'bo'));
    expect(other.content[0]!.text).toBe('No matches.');
    expect((await tools.memory_search_episodes!.run({ query: 'kayak' }, context(memory, 'ana'))).content[0]!.text).toBe('No matches.');
  });

  it('reports bad arguments as tool errors, not exceptions', async () => {
    const { memory } = memoryService(scriptedModels());
    const [search, , , pin] = MEMORY_TOOLS;
    expect(await search!.run({}, context(memory, 'ana'))).toMatchObject({ isError: true });
    expect(await pin!.run({ text: '   ' }, context(memory, 'ana'))).toMatchObject({ isError: true });
    expect(await pin!.run({ text: 'fine' }, context(memory, 'not/valid'))).toMatchObject({ isError: true });
  });
});
