import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { EXTRACTION_SCHEMA } from '../../../companion/src/memory/extraction.js';
import { send, sharedMemoryApp } from './helpers.js';

const server = sharedMemoryApp({ withModel: true, memoryYaml: '  model: tiny\n  summary_debounce_seconds: 3600' });

describe('distillation with the tiny model', () => {
  it('queues extraction, and a flush produces schema-valid records from the grammar-constrained answer', async () => {
    const turns = [
      { user: 'My name is Ana and I live in Lisbon.', assistant: 'Nice to meet you, Ana.' },
      { user: 'I decided to learn the guitar this year.', assistant: 'Great decision!' },
    ];
    const ingest = await send(server.app, 'POST', '/memory/ingest', { agent_id: 'ana', conversation_id: 'intro', turns, session_date: '2024-02-10' });
    expect(ingest.json()).toEqual({ status: 'ok', turns_ingested: 2, extraction: 'queued' });

    const flush = await send(server.app, 'POST', '/memory/flush', { agent_id: 'ana' });
    expect(flush.statusCode).toBe(200);
    expect(flush.json()).toMatchObject({ status: 'distilled', signals_distilled: 2, pending: 0 });
    expect(flush.json().episodes_added).toBeGreaterThanOrEqual(1);

    // Rebuild the model's answer from the stored records: it must satisfy the extraction schema.
    const episodes = (await send(server.app, 'GET', '/memory/agents/ana/episodes')).json().items;
    const facts = (await send(server.app, 'GET', '/memory/agents/ana/facts')).json().items;
    const identity = (await send(server.app, 'GET', '/memory/agents/ana/identity')).json().items;
    const entities = (await send(server.app, 'GET', '/memory/agents/ana/entities')).json().items;
    expect(episodes.length).toBeGreaterThanOrEqual(1);
    const validate = new Ajv({ strict: false }).compile(EXTRACTION_SCHEMA);
    const episode = episodes[0];
    const rebuilt = {
      episode: { summary: episode.summary, topics: episode.topics, decisions: episode.decisions },
      entities: entities.slice(0, 5).map((entity: { name: string; kind: string }) => ({ name: entity.name, kind: entity.kind })),
      identity: identity.slice(0, 3).map((entry: { key: string; value: string }) => ({ key: entry.key, value: entry.value })),
      facts: facts.slice(0, 4).map((fact: { text: string }) => fact.text),
    };
    expect(validate(rebuilt), JSON.stringify(validate.errors)).toBe(true);
    expect(episode).toMatchObject({ conversation_id: 'intro', session_date: '2024-02-10', salience: 1 });
    for (const fact of facts) expect(fact).toMatchObject({ status: 'candidate', source: 'extraction' });
    const status = (await send(server.app, 'GET', '/memory/agents/ana')).json();
    expect(status).toMatchObject({ agent_id: 'ana', turns: 2, pending_signals: 0, index: 'ready' });
  });
});
