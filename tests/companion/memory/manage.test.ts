import { beforeAll, describe, expect, it } from 'vitest';
import { send, sharedMemoryApp } from './helpers.js';

const server = sharedMemoryApp();

const ingest = (agent_id: string, text: string) =>
  send(server.app, 'POST', '/memory/ingest', { agent_id, conversation_id: 'c', turns: [{ user: text, assistant: 'ok' }], skip_extraction: true });
const search = (agent_id: string, query: string) => send(server.app, 'POST', '/memory/search', { agent_id, query, scope: 'transcript' });
const texts = async (agent_id: string, query: string) => (await search(agent_id, query)).json().items.map((item: { text: string }) => item.text);

beforeAll(async () => {
  await ingest('ana', 'Ana keeps bees on the roof.');
  await ingest('bo', 'Bo keeps bees in the garden.');
  await send(server.app, 'POST', '/memory/agents/ana/facts', { text: 'Ana harvests honey in August.' });
});

describe('index operations (docs/memory.md rule 6), loopback only', () => {
  it('refuses every index operation from a non-loopback peer', async () => {
    for (const [method, url] of [
      ['POST', '/memory/agents/ana/index/rebuild'],
      ['DELETE', '/memory/agents/ana/index'],
      ['DELETE', '/memory/agents/ana'],
    ] as const) {
      const response = await send(server.app, method, url, undefined, '192.168.1.20');
      expect(response.statusCode, url).toBe(403);
      expect(response.json().error.code).toBe('permission_denied');
    }
    expect(await texts('ana', 'bees')).toHaveLength(1);
  });

  it('removes an index (records stay, search says so), and a rebuild restores it from the records without widening scope', async () => {
    const removed = await send(server.app, 'DELETE', '/memory/agents/ana/index');
    expect(removed.json()).toEqual({ agent_id: 'ana', index: 'removed', rows: { transcript: 1, episodes: 0, facts: 1, identity: 0 } });
    const refused = await search('ana', 'bees');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({ code: 'memory_index_removed', param: 'agent_id' });
    // other agents are untouched
    expect(await texts('bo', 'bees')).toEqual(['user: Bo keeps bees in the garden.\nassistant: ok']);
    // records written while the index is removed are kept, and indexed by the rebuild
    await ingest('ana', 'Ana also keeps bees at the allotment.');
    expect((await send(server.app, 'GET', '/memory/agents/ana')).json()).toMatchObject({ turns: 2, index: 'removed' });

    const rebuilt = await send(server.app, 'POST', '/memory/agents/ana/index/rebuild');
    expect(rebuilt.json()).toEqual({ agent_id: 'ana', index: 'ready', rows: { transcript: 2, episodes: 0, facts: 1, identity: 0 } });
    expect(await texts('ana', 'bees')).toHaveLength(2);
    expect((await texts('ana', 'garden')).length).toBe(0);
    // rebuilding a healthy index again gives the same result, not duplicates
    await send(server.app, 'POST', '/memory/agents/ana/index/rebuild');
    expect(await texts('ana', 'bees')).toHaveLength(2);
    expect((await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'honey', scope: 'pinned' })).json().items).toHaveLength(1);
  });

  it('purges a namespace: every record of that agent goes, other agents stay', async () => {
    await send(server.app, 'POST', '/memory/ingest', { agent_id: 'cy', conversation_id: 'c', turns: [{ user: 'Cy keeps bees too' }] });
    await send(server.app, 'PUT', '/memory/agents/cy/identity/name', { value: 'Cy' });
    const purged = await send(server.app, 'DELETE', '/memory/agents/cy');
    expect(purged.json()).toEqual({ agent_id: 'cy', deleted: { turns: 1, signals: 1, episodes: 0, facts: 0, identity: 1, entities: 0 } });
    expect(await texts('cy', 'bees')).toEqual([]);
    expect((await send(server.app, 'GET', '/memory/agents/cy')).json()).toMatchObject({ turns: 0, pending_signals: 0, identity: 0 });
    expect(await texts('bo', 'bees')).toHaveLength(1);
    const agents = (await send(server.app, 'GET', '/memory/agents')).json().agents.map((agent: { agent_id: string }) => agent.agent_id);
    expect(agents).toEqual(['ana', 'bo']);
  });
});

describe('browsing and editing', () => {
  it('pins, edits and deletes a fact; a duplicate pin merges', async () => {
    const created = await send(server.app, 'POST', '/memory/agents/bo/facts', { text: 'Bo sells honey at the market.' });
    expect(created.statusCode).toBe(201);
    const fact = created.json();
    expect(fact).toMatchObject({ text: 'Bo sells honey at the market.', status: 'pinned', source: 'user', support_count: 1, merged: false });
    const again = await send(server.app, 'POST', '/memory/agents/bo/facts', { text: 'Bo sells honey at the market' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id: fact.id, support_count: 2, merged: true });

    const edited = await send(server.app, 'PATCH', `/memory/agents/bo/facts/${fact.id}`, { text: 'Bo sells honey at the Saturday market.' });
    expect(edited.json()).toMatchObject({ id: fact.id, text: 'Bo sells honey at the Saturday market.' });
    expect((await send(server.app, 'POST', '/memory/search', { agent_id: 'bo', query: 'saturday', scope: 'pinned' })).json().items).toHaveLength(1);
    // another agent cannot touch it
    expect((await send(server.app, 'DELETE', `/memory/agents/ana/facts/${fact.id}`)).statusCode).toBe(404);
    expect((await send(server.app, 'DELETE', `/memory/agents/bo/facts/${fact.id}`)).json()).toEqual({ id: fact.id, deleted: true });
    expect((await send(server.app, 'GET', '/memory/agents/bo/facts')).json()).toEqual({ items: [], next_before: null });
    expect((await send(server.app, 'PATCH', `/memory/agents/bo/facts/${fact.id}`, { text: 'x' })).json().error.code).toBe('memory_record_not_found');
    expect((await send(server.app, 'PATCH', `/memory/agents/bo/facts/${fact.id}`, {})).statusCode).toBe(400);
  });

  it('sets, lists and deletes identity entries', async () => {
    expect((await send(server.app, 'PUT', '/memory/agents/bo/identity/occupation', { value: 'beekeeper' })).json()).toMatchObject({
      key: 'occupation',
      value: 'beekeeper',
      source: 'user',
    });
    expect((await send(server.app, 'GET', '/memory/agents/bo/identity')).json().items).toMatchObject([{ key: 'occupation', value: 'beekeeper' }]);
    expect((await send(server.app, 'DELETE', '/memory/agents/bo/identity/occupation')).json()).toEqual({ key: 'occupation', deleted: true });
    expect((await send(server.app, 'DELETE', '/memory/agents/bo/identity/occupation')).statusCode).toBe(404);
  });

  it('pages the transcript newest first', async () => {
    for (let index = 0; index < 5; index++) await ingest('dee', `turn number ${index}`);
    const first = (await send(server.app, 'GET', '/memory/agents/dee/transcript?limit=2')).json();
    expect(first.items.map((turn: { user: string }) => turn.user)).toEqual(['turn number 4', 'turn number 3']);
    const second = (await send(server.app, 'GET', `/memory/agents/dee/transcript?limit=2&before=${first.next_before}`)).json();
    expect(second.items.map((turn: { user: string }) => turn.user)).toEqual(['turn number 2', 'turn number 1']);
    expect((await send(server.app, 'GET', '/memory/agents/bad%20id/transcript')).statusCode).toBe(400);
  });
});
