import { describe, expect, it } from 'vitest';
import { slotBudgetAnswer, slotBudgetChange, slotBudgetProblem } from '$lib/settings/slot-budget';

describe("the Server screen's disk limit for saved conversations", () => {
  it('saves only its own setting, in MB', () => {
    expect(slotBudgetChange(512)).toEqual({ version: 1, models: { slot_cache_mb: 512 } });
  });

  it('takes whole numbers from 0 to the schema maximum and says what is wrong with anything else', () => {
    expect(slotBudgetProblem('0')).toBeNull();
    expect(slotBudgetProblem(' 2048 ')).toBeNull();
    expect(slotBudgetProblem('1048576')).toBeNull();
    expect(slotBudgetProblem('')).toBe('Give a whole number of MB (0 keeps none).');
    expect(slotBudgetProblem('1.5')).toBe('Give a whole number of MB (0 keeps none).');
    expect(slotBudgetProblem('lots')).toBe('Give a whole number of MB (0 keeps none).');
    expect(slotBudgetProblem('-1')).toBe('Give a number from 0 to 1,048,576 MB.');
    expect(slotBudgetProblem('1048577')).toBe('Give a number from 0 to 1,048,576 MB.');
  });

  it('says whether the new limit applies now or once loaded models load again', () => {
    expect(slotBudgetAnswer({ reload_required: [], restart_required: [] })).toBe('Saved. It applies now.');
    expect(slotBudgetAnswer({ reload_required: ['tiny'], restart_required: [] })).toBe(
      'Saved. tiny keeps the old limit until it is loaded again; models loaded from now on use the new one.',
    );
    expect(slotBudgetAnswer({ reload_required: ['a', 'b'], restart_required: [] })).toBe(
      'Saved. a, b keep the old limit until they are loaded again; models loaded from now on use the new one.',
    );
  });
});
