import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { memoryApp, send } from './helpers.js';

const memoryOf = (memory: Record<string, unknown>) => checkDocument({ version: 1, memory }).document!.memory;

describe('memory settings (docs/memory.md Settings)', () => {
  it('fills in the defaults', () => {
    expect(checkDocument({ version: 1 }).document!.memory).toEqual({
      memory_budget_tokens: 800,
      summary_debounce_seconds: 60,
      consolidation_interval_hours: 24,
      salience_floor: 0.2,
      episode_retention_days: 365,
    });
  });

  it('keeps values at the range edges and clamps values past them', () => {
    const lowest = { memory_budget_tokens: 100, summary_debounce_seconds: 10, consolidation_interval_hours: 1, salience_floor: 0, episode_retention_days: 0 };
    const highest = {
      memory_budget_tokens: 4000,
      summary_debounce_seconds: 3600,
      consolidation_interval_hours: 168,
      salience_floor: 1,
      episode_retention_days: 3650,
    };
    expect(memoryOf(lowest)).toEqual(lowest);
    expect(memoryOf(highest)).toEqual(highest);
    expect(
      memoryOf({ memory_budget_tokens: 99, summary_debounce_seconds: 9, consolidation_interval_hours: 0.5, salience_floor: -0.01, episode_retention_days: -1 }),
    ).toEqual(lowest);
    expect(
      memoryOf({
        memory_budget_tokens: 4001,
        summary_debounce_seconds: 3601,
        consolidation_interval_hours: 169,
        salience_floor: 1.5,
        episode_retention_days: 3651,
      }),
    ).toEqual(highest);
    expect(memoryOf({ memory_budget_tokens: 812.6 }).memory_budget_tokens).toBe(813);
  });

  it('keeps the memory model ids and refuses wrong types and unknown keys', () => {
    expect(memoryOf({ model: 'tiny', embedding_model: 'nomic' })).toMatchObject({ model: 'tiny', embedding_model: 'nomic' });
    expect(checkDocument({ version: 1, memory: { memory_budget_tokens: 'lots' } }).problems).toEqual(['memory.memory_budget_tokens: must be a number']);
    expect(checkDocument({ version: 1, memory: { budget: 5 } }).problems).toEqual([expect.stringMatching(/^memory\.budget: unknown key/)]);
  });

  it('the saved value governs recall: a budget saved out of range is used clamped', async () => {
    const server = await memoryApp({ memoryYaml: '  memory_budget_tokens: 50' });
    try {
      expect(server.services.config.memory.memory_budget_tokens).toBe(100);
      const response = await send(server.app, 'POST', '/memory/context', { agent_id: 'ana', query: 'anything' });
      expect(response.json()).toEqual({ items: [], tokens: 0, budget_tokens: 100 });
    } finally {
      await server.close();
    }
  });
});
