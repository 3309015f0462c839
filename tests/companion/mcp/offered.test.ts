import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { SessionEventStore } from '../../../companion/src/mcp/event-store.js';
import { serviceOffered } from '../../../companion/src/tools/permitted.js';
import type { ConfigDocument } from '#shared/api/config.js';

function config(): ConfigDocument {
  const service = (name: string, expose: string, enabled = true) => ({ name, transport: 'stdio', command: 'node', args: [], expose, enabled });
  const { document, problems } = checkDocument({
    version: 1,
    mcp_services: [service('open', 'all'), service('reads', 'read'), service('closed', 'none'), service('off', 'all', false)],
    agents: [
      { id: 'wide', model: 'tiny', tools: ['reads_*', 'open_echo'] },
      { id: 'star', model: 'tiny', tools: ['*'] },
      { id: 'blind', model: 'tiny', tools: ['reads_*'], tool_policy: { read: 'deny', write: 'deny', exec: 'deny', network: 'deny' } },
    ],
  });
  if (!document) throw new Error(problems.join('; '));
  return document;
}

const grant = (agent: string | null) => ({ id: 'key_1', agent, scopes: ['tools' as const] });

describe('which services’ resources, prompts and log messages a caller sees', () => {
  it('follows expose like read tools: read and all, never none, never a disabled service', () => {
    const document = config();
    expect(['open', 'reads', 'closed', 'off', 'absent'].filter((name) => serviceOffered(document, null, name))).toEqual(['open', 'reads']);
  });

  it('narrows an agent-scoped key to the services its agent lists whole, unless reads are denied', () => {
    const document = config();
    const seen = (agent: string) => ['open', 'reads', 'closed'].filter((name) => serviceOffered(document, grant(agent), name));
    expect(seen('wide')).toEqual(['reads']);
    expect(seen('star')).toEqual(['open', 'reads']);
    expect(seen('blind')).toEqual([]);
    expect(seen('nobody')).toEqual([]);
  });
});

describe('the /mcp session event store', () => {
  const message = (id: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progressToken: 't', progress: id } });

  it('replays the events of one stream after a given id, and keeps only the newest', async () => {
    const store = new SessionEventStore(4);
    const first = await store.storeEvent('a', message(1));
    await store.storeEvent('b', message(2));
    const third = await store.storeEvent('a', message(3));
    await store.storeEvent('a', message(4));
    const replayed: number[] = [];
    expect(await store.replayEventsAfter(first, { send: async (_id, sent) => void replayed.push((sent as ReturnType<typeof message>).params.progress) })).toBe(
      'a',
    );
    expect(replayed).toEqual([3, 4]);
    expect(store.knows(third)).toBe(true);
    await store.storeEvent('a', message(5));
    expect(store.knows(first)).toBe(false);
    await expect(store.replayEventsAfter(first, { send: async () => undefined })).rejects.toThrow(/Unknown event id/);
  });

  it('keeps no more than its character budget: large events push the oldest out', async () => {
    const store = new SessionEventStore(1000, 2000);
    const big = { jsonrpc: '2.0' as const, id: 1, result: { content: [{ type: 'text', text: 'x'.repeat(900) }] } };
    const first = await store.storeEvent('a', big);
    const second = await store.storeEvent('a', big);
    const third = await store.storeEvent('a', big);
    expect(store.knows(first)).toBe(false);
    expect(store.knows(second)).toBe(true);
    const replayed: string[] = [];
    await store.replayEventsAfter(second, { send: async (id) => void replayed.push(id) });
    expect(replayed).toEqual([third]);
  });
});
