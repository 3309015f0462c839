import { beforeAll, describe, expect, it } from 'vitest';
import { assertAgentScope } from '../../../companion/src/routes/memory/scope.js';
import { HearthError } from '../../../companion/src/errors.js';
import type { FastifyRequest } from 'fastify';
import { send, sharedMemoryApp } from './helpers.js';

const server = sharedMemoryApp();

const ana = [
  { user: 'I painted a sunrise over the lake last weekend.', assistant: 'That sounds lovely! What colours did you use?' },
  { user: 'Mostly orange and violet.', assistant: 'A bold palette.' },
  { user: 'My sister Lena is visiting from Berlin in June.', assistant: 'You must be excited to see her.' },
  { user: 'We will go hiking in the Alps together.', assistant: 'Bring good boots!' },
];

beforeAll(async () => {
  const ingest = (agent_id: string, conversation_id: string, turns: typeof ana, session_date: string) =>
    send(server.app, 'POST', '/memory/ingest', { agent_id, conversation_id, turns, session_date, skip_extraction: true });
  await ingest('ana', 'morning', ana.slice(0, 2), '2024-04-01');
  await ingest('ana', 'evening', ana.slice(2), '2024-04-02T19:00:00Z');
  await ingest('bo', 'secret', [{ user: 'My bank PIN is 4321 and I painted the fence.', assistant: 'Keep it safe.' }], '2024-04-03');
  for (let index = 0; index < 60; index++) {
    await ingest(
      'cy',
      `talk-${index}`,
      [
        {
          user: `Day ${index}: we talked about painting walls and colours, round ${index}.`,
          assistant: `Noted the painting plan number ${index} with its long description of brushes and rollers.`,
        },
      ],
      `2024-01-${String((index % 28) + 1).padStart(2, '0')}`,
    );
  }
});

describe('POST /memory/search', () => {
  it('finds transcript turns with stemming, best first, with material, source and date', async () => {
    const response = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'painting', scope: 'transcript', limit: 5 });
    expect(response.statusCode).toBe(200);
    const items = response.json().items;
    expect(items[0]).toMatchObject({ material: 'transcript', date: '2024-04-01' });
    expect(items[0].text).toContain('I painted a sunrise');
    expect(items[0].source_id).toMatch(/^turn_\d+$/);
    expect(items[0].score).toBeGreaterThan(0);
  });

  it('never shows another agent’s memory', async () => {
    const mine = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'PIN fence bank', scope: 'transcript' });
    expect(mine.json().items).toEqual([]);
    const theirs = await send(server.app, 'POST', '/memory/search', { agent_id: 'bo', query: 'sunrise lake hiking painted', scope: 'transcript' });
    expect(theirs.json().items.map((item: { text: string }) => item.text)).toEqual([
      'user: My bank PIN is 4321 and I painted the fence.\nassistant: Keep it safe.',
    ]);
    const unknown = await send(server.app, 'POST', '/memory/search', { agent_id: 'nobody', query: 'painted', scope: 'transcript' });
    expect(unknown.json().items).toEqual([]);
  });

  it('searches pinned facts and episodes as separate entry points', async () => {
    await send(server.app, 'POST', '/memory/agents/ana/facts', { text: 'Ana paints landscapes in oils.' });
    const pinned = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'paint', scope: 'pinned' });
    expect(pinned.json().items).toMatchObject([{ text: 'Ana paints landscapes in oils.', material: 'pinned' }]);
    const episodes = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'paint', scope: 'episodes' });
    expect(episodes.json().items).toEqual([]);
  });

  it('refuses an unknown scope and a query of stopwords only finds nothing', async () => {
    const bad = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'x', scope: 'everything' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.param).toBe('scope');
    const empty = await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'what did they do', scope: 'transcript' });
    expect(empty.json().items).toEqual([]);
  });

  it('refuses a key scoped to another agent (403), and lets the scoped agent through', () => {
    const request = (agent: string | null) => ({ grant: agent === null ? null : { agent } }) as unknown as FastifyRequest;
    expect(() => assertAgentScope(request('bo'), 'ana')).toThrow(HearthError);
    try {
      assertAgentScope(request('bo'), 'ana');
    } catch (error) {
      expect((error as HearthError).status).toBe(403);
      expect((error as HearthError).param).toBe('agent_id');
    }
    expect(() => assertAgentScope(request('ana'), 'ana')).not.toThrow();
    expect(() => assertAgentScope(request(null), 'ana')).not.toThrow();
  });
});

describe('POST /memory/context', () => {
  const tokens = (text: string) => Math.ceil(text.length / 4);

  it('returns the injected items in order, one block per session with one date header, and counts their tokens', async () => {
    const response = await send(server.app, 'POST', '/memory/context', { agent_id: 'ana', query: 'When is Lena visiting and where will they hike?' });
    const body = response.json();
    expect(body.budget_tokens).toBe(800);
    expect(body.items[0]).toMatchObject({ material: 'transcript', date: '2024-04-02T19:00:00Z' });
    expect(body.items[0].text).toBe(
      '[2024-04-02]\nuser: My sister Lena is visiting from Berlin in June.\nassistant: You must be excited to see her.\nuser: We will go hiking in the Alps together.\nassistant: Bring good boots!',
    );
    expect(body.tokens).toBe(body.items.reduce((sum: number, item: { text: string }) => sum + tokens(item.text), 0));
  });

  it('never goes over the budget, whatever the budget', async () => {
    // What recall holds in all: a budget fills up to within one item of itself, or with all of it.
    const everything = (
      await send(server.app, 'POST', '/memory/context', { agent_id: 'cy', query: 'painting walls colours brushes rollers plan', budget_tokens: 4000 })
    ).json();
    for (const budget of [100, 150, 333, 800, 4000]) {
      const response = await send(server.app, 'POST', '/memory/context', {
        agent_id: 'cy',
        query: 'painting walls colours brushes rollers plan',
        budget_tokens: budget,
      });
      const body = response.json();
      expect(body.budget_tokens).toBe(budget);
      expect(body.tokens).toBeLessThanOrEqual(budget);
      expect(body.items.length).toBeGreaterThan(0);
      expect(body.tokens).toBe(body.items.reduce((sum: number, item: { text: string }) => sum + tokens(item.text), 0));
      expect(body.tokens).toBeGreaterThanOrEqual(Math.min(budget - 59, everything.tokens));
    }
  });

  it('normalises a budget outside 100-4000 into range', async () => {
    const low = await send(server.app, 'POST', '/memory/context', { agent_id: 'cy', query: 'painting', budget_tokens: 5 });
    expect(low.json().budget_tokens).toBe(100);
    expect(low.json().tokens).toBeLessThanOrEqual(100);
    const high = await send(server.app, 'POST', '/memory/context', { agent_id: 'cy', query: 'painting', budget_tokens: 99999 });
    expect(high.json().budget_tokens).toBe(4000);
  });

  it('puts a pinned fact that clearly matches first, and leaves out one that does not', async () => {
    await send(server.app, 'POST', '/memory/agents/ana/facts', { text: 'Lena lives in Berlin and visits every June.' });
    const body = (await send(server.app, 'POST', '/memory/context', { agent_id: 'ana', query: 'Where does Lena live?' })).json();
    expect(body.items[0]).toMatchObject({ material: 'pinned', text: 'Lena lives in Berlin and visits every June.' });
    const other = (await send(server.app, 'POST', '/memory/context', { agent_id: 'ana', query: 'What colours did the sunrise painting use?' })).json();
    expect(other.items.every((item: { material: string }) => item.material === 'transcript')).toBe(true);
  });

  it('answers 400 naming the field for a bad body', async () => {
    const response = await send(server.app, 'POST', '/memory/context', { agent_id: 'ana' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.param).toBe('query');
  });
});
