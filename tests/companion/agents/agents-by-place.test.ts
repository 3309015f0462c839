import { describe, expect, it } from 'vitest';
import type { AgentRecord } from '#shared/api/agents.js';
import { AgentsByPlace } from '../../../companion/src/agents/dispatcher.js';
import type { Logger } from '../../../companion/src/logger.js';

/** Places `home` (one agent) and `away` (fails), with every warning kept and every place asked counted. */
function places() {
  const warnings: string[] = [];
  const asked: string[] = [];
  const log: Logger = { info() {}, error() {}, warn: (_fields, message) => void warnings.push(message ?? '') };
  const helper = { id: 'home/helper', name: 'helper' } as AgentRecord;
  const byPlace = new AgentsByPlace({
    names: () => ['home', 'away'],
    agentsOf: async (place) => {
      asked.push(place);
      if (place === 'away') throw new Error('unreachable');
      return [helper];
    },
    log,
    failed: 'agents of a test place could not be listed',
  });
  return { byPlace, warnings, asked, helper };
}

describe('agents that live in places (paired hosts, cloud workspaces)', () => {
  it('lists every place that answers, and leaves out and logs one that fails', async () => {
    const { byPlace, warnings, helper } = places();
    expect(await byPlace.list()).toEqual([helper]);
    expect(warnings).toEqual(['agents of a test place could not be listed']);
  });

  it('finds an agent in its place; a failing place logs and finds nothing; an unknown place is not asked', async () => {
    const { byPlace, warnings, asked, helper } = places();
    expect(await byPlace.find('home', 'home/helper')).toBe(helper);
    expect(await byPlace.find('home', 'home/other')).toBeUndefined();
    expect(await byPlace.find('away', 'away/helper')).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(await byPlace.find('elsewhere', 'elsewhere/helper')).toBeUndefined();
    expect(asked).toEqual(['home', 'home', 'away']);
  });
});
