import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { memoryApp, send } from './helpers.js';

const memoryOf = (memory: Record<string, unknown>) => checkDocument({ version: 1, memory }).document!.memory;

describe('memory settings (docs/memory.md Settings)', () => {
  it('fills in the defaults', () => {
    expect(checkDocument({ version: 1 }).document!.memory).toEqual({
      memoryBudgetTokens: 800,
      summaryDebounceSeconds: 60,
      consolidationIntervalHours: 24,
      salienceFloor: 0.2,
      episodeRetentionDays: 365,
    });
  });

  it('keeps values at the range edges and clamps values past them', () => {
    expect(memoryOf({ memoryBudgetTokens: 100, summaryDebounceSeconds: 10, consolidationIntervalHours: 1, salienceFloor: 0, episodeRetentionDays: 0 })).toEqual(
      { memoryBudgetTokens: 100, summaryDebounceSeconds: 10, consolidationIntervalHours: 1, salienceFloor: 0, episodeRetentionDays: 0 },
    );
    expect(
      memoryOf({ memoryBudgetTokens: 4000, summaryDebounceSeconds: 3600, consolidationIntervalHours: 168, salienceFloor: 1, episodeRetentionDays: 3650 }),
    ).toEqual({ memoryBudgetTokens: 4000, summaryDebounceSeconds: 3600, consolidationIntervalHours: 168, salienceFloor: 1, episodeRetentionDays: 3650 });
    expect(
      memoryOf({ memoryBudgetTokens: 99, summaryDebounceSeconds: 9, consolidationIntervalHours: 0.5, salienceFloor: -0.01, episodeRetentionDays: -1 }),
    ).toEqual({ memoryBudgetTokens: 100, summaryDebounceSeconds: 10, consolidationIntervalHours: 1, salienceFloor: 0, episodeRetentionDays: 0 });
    expect(
      memoryOf({ memoryBudgetTokens: 4001, summaryDebounceSeconds: 3601, consolidationIntervalHours: 169, salienceFloor: 1.5, episodeRetentionDays: 3651 }),
    ).toEqual({ memoryBudgetTokens: 4000, summaryDebounceSeconds: 3600, consolidationIntervalHours: 168, salienceFloor: 1, episodeRetentionDays: 3650 });
    expect(memoryOf({ memoryBudgetTokens: 812.6 }).memoryBudgetTokens).toBe(813);
  });

  it('keeps the memory model ids and refuses wrong types and unknown keys', () => {
    expect(memoryOf({ model: 'tiny', embedding_model: 'nomic' })).toMatchObject({ model: 'tiny', embedding_model: 'nomic' });
    expect(checkDocument({ version: 1, memory: { memoryBudgetTokens: 'lots' } }).problems).toEqual(['memory.memoryBudgetTokens: must be number']);
    expect(checkDocument({ version: 1, memory: { budget: 5 } }).problems).toEqual(['memory.budget: unknown key']);
  });

  it('the saved value governs recall: a budget saved out of range is used clamped', async () => {
    const server = await memoryApp({ memoryYaml: '  memoryBudgetTokens: 50' });
    try {
      expect(server.services.config.memory.memoryBudgetTokens).toBe(100);
      const response = await send(server.app, 'POST', '/memory/context', { agent_id: 'ana', query: 'anything' });
      expect(response.json()).toEqual({ items: [], tokens: 0, budget_tokens: 100 });
    } finally {
      await server.close();
    }
  });
});
