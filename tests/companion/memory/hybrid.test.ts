import { beforeAll, describe, expect, it } from 'vitest';
import { send, sharedMemoryApp } from './helpers.js';

// The tiny embedding model (random weights, mean pooling): its vectors are random but deterministic.
const server = sharedMemoryApp({ withEmbeddingModel: true, memoryYaml: '  embedding_model: tiny-embed' });

const turns = [
  { user: 'We adopted a puppy called Biscuit.', assistant: 'Biscuit is a lovely name.' },
  { user: 'The quarterly budget review is on Friday.', assistant: 'I will prepare the figures.' },
  { user: 'Grandma sent her apple pie recipe.', assistant: 'Cinnamon makes it.' },
];
const vectorRows = (agent: string) =>
  (server.services.db.prepare('SELECT COUNT(*) AS n FROM memory_vector_rows WHERE agent_id = ?').get(agent) as { n: number }).n;

beforeAll(async () => {
  await send(server.app, 'POST', '/memory/ingest', { agent_id: 'ana', conversation_id: 'c', turns, skip_extraction: true });
  await send(server.app, 'POST', '/memory/ingest', {
    agent_id: 'bo',
    conversation_id: 'c',
    turns: [{ user: 'Bo only talks about trains.', assistant: 'Choo choo.' }],
    skip_extraction: true,
  });
  await server.services.memory.vectors.settled();
});

describe('hybrid search with an embedding model', () => {
  it('embeds every record in the background, partitioned by agent', () => {
    expect(server.services.memory.vectors.available).toBe(true);
    expect(vectorRows('ana')).toBe(3);
    expect(vectorRows('bo')).toBe(1);
  });

  it('finds records by vector when no word matches, and fuses both rankings when they agree', async () => {
    const semantic = (await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'zqxv wplk', scope: 'transcript', limit: 2 })).json().items;
    expect(semantic).toHaveLength(2);
    for (const item of semantic) expect(item.material).toBe('transcript');
    const exact = (
      await send(server.app, 'POST', '/memory/search', {
        agent_id: 'ana',
        query: 'The quarterly budget review is on Friday.\nI will prepare the figures.',
        scope: 'transcript',
        limit: 3,
      })
    ).json().items;
    expect(exact[0].text).toBe('user: The quarterly budget review is on Friday.\nassistant: I will prepare the figures.');
    expect(exact[0].score).toBeGreaterThan(exact[1].score);
  });

  it('never returns another agent’s records from the vectors', async () => {
    const items = (
      await send(server.app, 'POST', '/memory/search', { agent_id: 'bo', query: 'puppy budget recipe zqxv', scope: 'transcript', limit: 10 })
    ).json().items;
    expect(items.map((item: { text: string }) => item.text)).toEqual(['user: Bo only talks about trains.\nassistant: Choo choo.']);
  });

  it('embeds pinned facts, and a removed index drops the vectors until a rebuild makes them again', async () => {
    await send(server.app, 'POST', '/memory/agents/ana/facts', { text: 'Biscuit is a beagle.' });
    await server.services.memory.vectors.settled();
    expect(vectorRows('ana')).toBe(4);
    const fact = (await send(server.app, 'POST', '/memory/search', { agent_id: 'ana', query: 'zqxv', scope: 'pinned' })).json().items;
    expect(fact).toMatchObject([{ text: 'Biscuit is a beagle.', material: 'pinned' }]);

    await send(server.app, 'DELETE', '/memory/agents/ana/index');
    expect(vectorRows('ana')).toBe(0);
    await send(server.app, 'POST', '/memory/agents/ana/index/rebuild');
    await server.services.memory.vectors.settled();
    expect(vectorRows('ana')).toBe(4);
    expect(vectorRows('bo')).toBe(1);

    await send(server.app, 'DELETE', '/memory/agents/ana');
    expect(vectorRows('ana')).toBe(0);
    expect((server.services.db.prepare('SELECT COUNT(*) AS n FROM memory_vectors').get() as { n: number }).n).toBe(1);
  });
});
