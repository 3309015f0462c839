import { describe, expect, it } from 'vitest';
import type { AgentRecord } from '#shared/api/agents.js';
import type { ConfigDocument } from '#shared/api/config.js';
import type { HostTarget } from '../../../companion/src/access/agent-target.js';
import { PlacedAgentSource, type PlacedSourceInputs } from '../../../companion/src/agents/dispatcher.js';
import type { StartedRun } from '../../../companion/src/agents/live-runs.js';
import type { Logger } from '../../../companion/src/logger.js';

const helper = { id: 'home/helper', name: 'helper' } as AgentRecord;

/** Places `home` (one agent) and `away` (fails), with every warning kept and every place asked counted. */
class TwoPlaces extends PlacedAgentSource<HostTarget, PlacedSourceInputs> {
  protected readonly failed = 'agents of a test place could not be listed';
  readonly asked: string[] = [];

  constructor(readonly warnings: string[] = []) {
    const log = { info() {}, error() {}, warn: (_fields, message) => void warnings.push(message ?? '') } satisfies Logger;
    super({ log, config: () => ({}) as ConfigDocument, runs: { startDriven: () => ({}) as StartedRun } });
  }

  protected places(): string[] {
    return ['home', 'away'];
  }

  protected placeOf(target: HostTarget): string {
    return target.host;
  }

  protected async agentsOf(place: string): Promise<AgentRecord[]> {
    this.asked.push(place);
    if (place === 'away') throw new Error('unreachable');
    return [helper];
  }

  start(): Promise<StartedRun> {
    throw new Error('not used here');
  }
}

const target = (host: string, agent: string): HostTarget => ({ kind: 'host', id: `${host}/${agent}`, host, agent });

describe('agents that live in places (paired hosts, cloud workspaces)', () => {
  it('lists every place that answers, and leaves out and logs one that fails', async () => {
    const source = new TwoPlaces();
    expect(await source.list()).toEqual([helper]);
    expect(source.warnings).toEqual(['agents of a test place could not be listed']);
  });

  it('finds an agent in its place; a failing place logs and finds nothing; an unknown place is not asked', async () => {
    const source = new TwoPlaces();
    expect(await source.find(target('home', 'helper'))).toBe(helper);
    expect(await source.find(target('home', 'other'))).toBeUndefined();
    expect(await source.find(target('away', 'helper'))).toBeUndefined();
    expect(source.warnings).toHaveLength(1);
    expect(await source.find(target('elsewhere', 'helper'))).toBeUndefined();
    expect(source.asked).toEqual(['home', 'home', 'away']);
  });
});
