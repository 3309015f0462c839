import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { relayedEvent } from '../../../companion/src/channel/device/relayed-events.js';
import { AGENT_RUN_EVENT_TYPES } from '#shared/api/agents.js';

/*
 * The run events: docs/agents.md's event table lists exactly the types of the AgentRunEvent
 * union (the list beside it fails to compile when a type is missing from it), and a paired
 * device decides for each known type whether a host's copy is relayed.
 */

const DOCS = fileURLToPath(new URL('../../../docs/agents.md', import.meta.url));

/** The event names in the first column of the `| event | data |` table. */
function documentedEvents(): string[] {
  const text = readFileSync(DOCS, 'utf8');
  const start = text.indexOf('| event | data |');
  expect(start, 'docs/agents.md has no "| event | data |" table').toBeGreaterThan(-1);
  const rows = text.slice(start).split('\n').slice(2);
  const names: string[] = [];
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    names.push(...[...row.split('|')[1]!.matchAll(/`([a-z_.]+)`/g)].map((match) => match[1]!));
  }
  return names;
}

describe('run events', () => {
  it('docs/agents.md documents every event type of the union, and no other', () => {
    expect(documentedEvents().sort()).toEqual([...AGENT_RUN_EVENT_TYPES].sort());
  });

  it('a device relays each known type it takes from a host and drops an unknown one', () => {
    const run = { id: 'run_host1', status: 'completed', steps: [] };
    const relayed = (type: string, fields: Record<string, unknown> = {}) => relayedEvent(JSON.stringify({ type, sequence: 3, run_id: 'run_host1', ...fields }));
    expect(relayed('run.created', { run })).toMatchObject({ kind: 'created', hostRun: 'run_host1' });
    expect(relayed('message.delta', { step: 0, delta: 'hi' })).toMatchObject({ kind: 'event', body: { type: 'message.delta', delta: 'hi' } });
    expect(relayed('tool_call.created', { step: 0, call_id: 'call_1', name: 'read', arguments: '{}' })).toMatchObject({ kind: 'event' });
    expect(relayed('run.completed', { run })).toMatchObject({ kind: 'end' });
    // An artifact names a file on the host: never relayed.
    expect(relayed('artifact.created', { artifact: { path: '/etc/passwd' } })).toBeUndefined();
    expect(relayed('run.exploded')).toBeUndefined();
    expect(relayed('constructor')).toBeUndefined();
    expect(relayed('__proto__')).toBeUndefined();
  });
});
