import { beforeAll, describe, expect, it } from 'vitest';
import type { MemorySearchItem } from '#shared/api/memory.js';
import { memoryService, scriptedModels, send, sharedMemoryApp } from './helpers.js';

/*
 * One agent cannot learn anything about another agent's memory through search scores (6):
 * BM25 statistics are per agent, so alice's scores are the same whatever bob stores.
 */

const server = sharedMemoryApp();
let aliceKey: string;

beforeAll(() => {
  aliceKey = server.services.keys.create({ label: 'alice', agent: 'alice', scopes: ['memory'] }).key;
});

async function ingest(agentId: string, texts: string[], key?: string): Promise<void> {
  const response = await server.app.inject({
    method: 'POST',
    url: '/memory/ingest',
    headers: key ? { authorization: `Bearer ${key}` } : {},
    payload: { agent_id: agentId, conversation_id: `${agentId}-c`, skip_extraction: true, turns: texts.map((user) => ({ user, assistant: 'noted' })) },
  });
  expect(response.statusCode, response.body).toBe(200);
}

async function scores(query: string): Promise<number[]> {
  const response = await server.app.inject({
    method: 'POST',
    url: '/memory/search',
    headers: { authorization: `Bearer ${aliceKey}` },
    payload: { agent_id: 'alice', query, scope: 'transcript', limit: 10 },
  });
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { items: MemorySearchItem[] }).items.map((item) => item.score);
}

describe('search scores per agent', () => {
  it('alice probing "4321" and "9999" sees the same scores whether or not bob stored "my bank PIN is 4321"', async () => {
    await ingest('alice', ['probe 4321', 'probe 9999', 'an ordinary day at work'], aliceKey);
    const before = { pin: await scores('4321'), other: await scores('9999'), both: await scores('probe') };
    expect(before.pin).toHaveLength(1);
    expect(before.pin).toEqual(before.other);

    await ingest('bob', [
      'my bank PIN is 4321',
      'the PIN 4321 opens the safe',
      ...Array.from({ length: 50 }, (_, index) => `bob's note number ${index} about probes`),
    ]);
    const after = { pin: await scores('4321'), other: await scores('9999'), both: await scores('probe') };
    expect(after).toEqual(before);
  });

  it('what bob stores never changes the order of alice’s results either', async () => {
    await ingest('alice', ['garden tomatoes and basil', 'tomatoes ripen in August', 'basil needs sun']);
    const order = async () =>
      (await send(server.app, 'POST', '/memory/search', { agent_id: 'alice', query: 'tomatoes basil', scope: 'transcript', limit: 10 }))
        .json()
        .items.map((item: MemorySearchItem) => item.text);
    const before = await order();
    await ingest(
      'bob',
      Array.from({ length: 40 }, () => 'basil basil basil pesto'),
    );
    expect(await order()).toEqual(before);
  });
});

describe('after an upgrade from the shared index', () => {
  it('an agent whose records have no index of their own yet is indexed when memory starts, and found', async () => {
    const { memory, db } = memoryService(scriptedModels());
    // As migration 5 leaves a database: the records, and no per-agent tables.
    db.prepare(
      `INSERT INTO memory_turns (agent_id, conversation_id, kind, user_text, assistant_text, created_at) VALUES ('legacy', 'c', 'direct', 'the lighthouse keeper retired', 'ok', 1)`,
    ).run();
    db.prepare(
      `INSERT INTO memory_facts (agent_id, text, status, source, salience, created_at, updated_at, decayed_at) VALUES ('legacy', 'Keeps a lighthouse.', 'pinned', 'user', 1, 1, 1, 1)`,
    ).run();
    memory.start();
    await memory.close();
    // start() made the agent's tables (search would otherwise make them on first use).
    expect(db.prepare(`SELECT COUNT(*) AS n FROM memory_fts_namespaces WHERE agent_id = 'legacy'`).get()).toEqual({ n: 1 });
    expect((await memory.search('legacy', 'lighthouse', 'transcript', 5)).map((item) => item.text)).toEqual([
      'user: the lighthouse keeper retired\nassistant: ok',
    ]);
    expect((await memory.search('legacy', 'lighthouse', 'pinned', 5)).map((item) => item.text)).toEqual(['Keeps a lighthouse.']);
  });
});
