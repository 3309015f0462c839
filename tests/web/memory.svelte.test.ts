import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, plural } from '$lib/stores/memory.svelte';
import { session } from '$lib/stores/session.svelte';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const status = { agent_id: 'helper', turns: 3, pending_signals: 0, episodes: 1, facts: { pinned: 1, candidate: 1 }, identity: 1, index: 'ready' };
const fact = (id: string, text: string, pinned = true) => ({
  id,
  text,
  status: pinned ? 'pinned' : 'candidate',
  source: 'user',
  support_count: 1,
  salience: 1,
  conversation_id: null,
  session_date: null,
  created_at: '',
  updated_at: '',
});

/** A tiny in-memory companion for the memory routes the store uses. */
function companion(pending = 2) {
  const config = { version: 1, memory: {} as Record<string, string> };
  const applied: unknown[] = [];
  let facts = [fact('fact_1', 'Likes tea'), fact('fact_2', 'Lives in Oslo', false)];
  const calls: string[] = [];
  stubFetch(async (path, init) => {
    const method = init.method ?? 'GET';
    calls.push(`${method} ${path}`);
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    if (path === '/memory/agents') return Response.json({ agents: [status] });
    if (path === '/memory/agents/helper') return Response.json(status);
    if (path === '/memory/agents/helper/facts' && method === 'GET') return Response.json({ items: facts, next_before: null });
    if (path === '/memory/agents/helper/facts' && method === 'POST') {
      facts = [...facts, fact('fact_3', body.text)];
      return Response.json({ ...facts.at(-1), merged: false }, { status: 201 });
    }
    if (path.startsWith('/memory/agents/helper/facts/') && method === 'PATCH') {
      const id = path.split('/').at(-1)!;
      facts = facts.map((item) => (item.id === id ? { ...item, ...body } : item));
      return Response.json(facts.find((item) => item.id === id));
    }
    if (path.startsWith('/memory/agents/helper/facts/') && method === 'DELETE') {
      facts = facts.filter((item) => item.id !== path.split('/').at(-1));
      return Response.json({ deleted: true });
    }
    if (path === '/memory/search')
      return Response.json({ items: [{ text: `found ${body.query} in ${body.scope}`, score: 1, material: 'transcript', source_id: 'turn_1', date: null }] });
    if (path === '/memory/context')
      return Response.json({ items: [{ text: 'Likes tea', material: 'pinned', source_id: 'fact_1', date: null }], tokens: 3, budget_tokens: 800 });
    if (path === '/admin/config/export?format=json') return Response.json(config);
    if (path === '/admin/config/apply') {
      applied.push(body);
      Object.assign(config.memory, body.document.memory);
      return Response.json({ valid: true, applied: true, changes: [], risks: [], restart_required: [], warnings: [] });
    }
    if (path === '/memory/flush')
      return Response.json({
        status: 'model_unavailable',
        conversations: 1,
        signals_distilled: 0,
        pending,
        episodes_added: 0,
        facts_added: 0,
        facts_merged: 0,
      });
    return Response.json({ error: { message: `no route ${path}`, type: 'invalid_request_error', code: 'route_not_found', param: null } }, { status: 404 });
  });
  return { calls, facts: () => facts, applied };
}

describe('MemoryStore', () => {
  it('lists agents, opens the first one and its facts, and filters them', async () => {
    companion();
    const memory = new MemoryStore();
    await memory.refreshAgents();
    expect(memory.agent).toBe('helper');
    expect(memory.facts.map((item) => item.text)).toEqual(['Likes tea', 'Lives in Oslo']);
    memory.query = 'oslo';
    expect(memory.shownFacts.map((item) => item.text)).toEqual(['Lives in Oslo']);
  });

  it('pins, edits, unpins and forgets facts on the companion', async () => {
    const server = companion();
    const memory = new MemoryStore();
    await memory.refreshAgents();
    expect(await memory.pin('  Works nights  ')).toBe(true);
    expect(server.facts().at(-1)?.text).toBe('Works nights');
    await memory.editFact(memory.facts[0]!, 'Likes green tea');
    expect(memory.facts[0]?.text).toBe('Likes green tea');
    await memory.togglePin(memory.facts[0]!);
    expect(server.facts()[0]?.status).toBe('candidate');
    await memory.forgetFact(memory.facts[1]!);
    expect(server.facts().map((item) => item.id)).toEqual(['fact_1', 'fact_3']);
    expect(server.calls).toContain('DELETE /memory/agents/helper/facts/fact_2');
  });

  it("searches the transcript with the companion's search, and previews recall with its budget", async () => {
    companion();
    const memory = new MemoryStore();
    await memory.refreshAgents();
    await memory.show('transcript');
    memory.query = 'tea';
    await memory.search();
    expect(memory.found?.[0]?.text).toBe('found tea in transcript');
    memory.recallQuery = 'What does the user drink?';
    await memory.preview();
    expect(memory.recall).toMatchObject({ tokens: 3, budget_tokens: 800 });
  });

  it('says what a flush did, and shows errors', async () => {
    companion();
    const memory = new MemoryStore();
    await memory.refreshAgents();
    await memory.flush();
    expect(memory.notice).toBe('Nothing new was remembered: no memory model is available, so 2 notes from conversations wait.');
    expect(memory.needsModel).toBe(true);
    await memory.select('nobody');
    expect(memory.error).toMatch(/^no route \/memory\/agents\/nobody/);
  });

  it('writes one note, not "1 notes"', async () => {
    companion(1);
    const memory = new MemoryStore();
    await memory.refreshAgents();
    await memory.flush();
    expect(memory.notice).toBe('Nothing new was remembered: no memory model is available, so 1 note from conversations waits.');
    expect([plural(0, 'fact'), plural(1, 'episode'), plural(2, 'episode')]).toEqual(['0 facts', '1 episode', '2 episodes']);
  });

  it('reads the memory models once signed in, and sets one through the configuration', async () => {
    const server = companion();
    const memory = new MemoryStore();
    session.markSignedOut();
    await memory.refreshModels();
    expect(memory.models).toBeNull();
    expect(server.calls.some((call) => call.includes('/admin/'))).toBe(false);

    session.markSignedIn();
    await memory.refreshModels();
    expect(memory.models).toEqual({ model: null, embeddingModel: null });
    await memory.refreshAgents();
    await memory.flush();
    expect(await memory.chooseModel('model', 'tiny')).toBe(true);
    expect(server.applied).toEqual([{ document: { version: 1, memory: { model: 'tiny' } }, prune: false, confirm_high_risk: false }]);
    expect(memory.models).toEqual({ model: 'tiny', embeddingModel: null });
    expect(memory.needsModel).toBe(false);
    expect(memory.notice).toMatch(/^tiny is now the memory model/);
    session.markSignedOut();
  });
});
