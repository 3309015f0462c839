import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { memoryTools, registerMemoryTools, type BuiltinTool } from '../../../companion/src/memory/tools.js';
import { memoryService, scriptedModels } from './helpers.js';

describe('memory tools for agents (docs/memory.md rule 8)', () => {
  it('registers one search per material and pin, with valid JSON schemas and classes', () => {
    const { memory } = memoryService(scriptedModels());
    const registered: BuiltinTool[] = [];
    registerMemoryTools((tool) => registered.push(tool), memory);
    expect(registered.map((tool) => [tool.name, tool.class])).toEqual([
      ['memory_search_pinned', 'read'],
      ['memory_search_episodes', 'read'],
      ['memory_search_transcript', 'read'],
      ['memory_pin', 'write'],
    ]);
    const ajv = new Ajv({ strict: false });
    for (const tool of registered) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
    }
  });

  it('pins and searches only within the calling agent’s scope', async () => {
    const { memory } = memoryService(scriptedModels());
    const tools = Object.fromEntries(memoryTools(memory).map((tool) => [tool.name, tool]));
    await memory.ingest({ agentId: 'ana', conversationId: 'c', turns: [{ user: 'I bought a red kayak.', assistant: 'Fun!' }], skipExtraction: true });
    const pinned = await tools.memory_pin!.run({ text: 'Ana owns a red kayak.' }, { agentId: 'ana' });
    expect(pinned).toMatchObject({ isError: false, structuredContent: { merged: false } });
    expect(pinned.content[0]!.text).toMatch(/^Pinned as fact_\d+\.$/);

    const facts = await tools.memory_search_pinned!.run({ query: 'kayak' }, { agentId: 'ana' });
    expect(facts.content[0]!.text).toContain('Ana owns a red kayak.');
    const transcript = await tools.memory_search_transcript!.run({ query: 'kayak', limit: 3 }, { agentId: 'ana' });
    expect(transcript.content[0]!.text).toContain('user: I bought a red kayak.');
    // an agent_id argument cannot widen scope: it is not part of the schema and is ignored
    const other = await tools.memory_search_transcript!.run({ query: 'kayak', agent_id: 'ana' }, { agentId: 'bo' });
    expect(other.content[0]!.text).toBe('No matches.');
    expect((await tools.memory_search_episodes!.run({ query: 'kayak' }, { agentId: 'ana' })).content[0]!.text).toBe('No matches.');
  });

  it('reports bad arguments as tool errors, not exceptions', async () => {
    const { memory } = memoryService(scriptedModels());
    const [search, , , pin] = memoryTools(memory);
    expect(await search!.run({}, { agentId: 'ana' })).toMatchObject({ isError: true });
    expect(await pin!.run({ text: '   ' }, { agentId: 'ana' })).toMatchObject({ isError: true });
    expect(await pin!.run({ text: 'fine' }, { agentId: 'not/valid' })).toMatchObject({ isError: true });
  });
});
