import { describe, expect, it } from 'vitest';
import { budgetOf, effortOf } from '../../../companion/src/generation/effort.js';

describe('reasoning efforts and thought budgets', () => {
  it('give each budgeted effort its share of the max tokens, or a fixed budget without them', () => {
    expect([budgetOf('minimal', 1600), budgetOf('low', 1600), budgetOf('medium', 1600)]).toEqual([100, 400, 800]);
    expect([budgetOf('minimal', undefined), budgetOf('low', undefined), budgetOf('medium', undefined)]).toEqual([256, 1024, 4096]);
    expect(budgetOf('minimal', 4)).toBe(1);
  });

  it('read a budget back as the smallest effort that covers it, so an effort survives the round trip', () => {
    for (const effort of ['minimal', 'low', 'medium'] as const) {
      expect(effortOf({ enabled: true, budgetTokens: budgetOf(effort, 1000) }, 1000)).toBe(effort);
      expect(effortOf({ enabled: true, budgetTokens: budgetOf(effort, undefined) }, undefined)).toBe(effort);
    }
    expect(effortOf({ enabled: true, budgetTokens: 501 }, 1000)).toBe('high');
    expect(effortOf({ enabled: true }, 1000)).toBe('high');
    expect(effortOf({ enabled: false }, 1000)).toBeUndefined();
    expect(effortOf(undefined, 1000)).toBeUndefined();
  });
});
