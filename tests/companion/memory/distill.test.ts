import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXTRACTION_SCHEMA } from '../../../companion/src/memory/extraction.js';
import { memoryService, sampleExtraction, scriptedModels } from './helpers.js';

const count = (db: ReturnType<typeof memoryService>['db'], table: string, agent = 'ana') =>
  (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE agent_id = ?`).get(agent) as { n: number }).n;

describe('buffering and debounce (docs/memory.md rules 1-3)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records a durable pending signal per turn and distils only after the conversation is quiet for summary_debounce_seconds', async () => {
    const models = scriptedModels();
    const { memory, db } = memoryService(models, { summary_debounce_seconds: 30 });
    memory.buffer({ agentId: 'ana', conversationId: 'c1', user: 'Planning Lisbon', assistant: 'Nice', projectId: 'travel' });
    expect(count(db, 'memory_signals')).toBe(1);
    await vi.advanceTimersByTimeAsync(20_000);
    memory.buffer({ agentId: 'ana', conversationId: 'c1', user: 'By train', sessionDate: '2024-05-01' });
    // the second turn restarted the timer: 20 s after it, still nothing ran
    await vi.advanceTimersByTimeAsync(20_000);
    expect(models.calls).toHaveLength(0);
    expect(count(db, 'memory_episodes')).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(models.calls).toHaveLength(1);
    expect(models.calls[0]!.prompt).toContain('user: Planning Lisbon');
    expect(models.calls[0]!.prompt).toContain('user: By train');
    expect(models.calls[0]!.schema).toBe(EXTRACTION_SCHEMA);
    expect(count(db, 'memory_signals')).toBe(0);
    expect(db.prepare('SELECT conversation_id, project_id, summary FROM memory_episodes').all()).toEqual([
      { conversation_id: 'c1', project_id: 'travel', summary: 'Ana planned a trip to Lisbon and chose the train.' },
    ]);
    // project membership was captured when buffering
    expect(db.prepare('SELECT project_id FROM memory_turns ORDER BY id').all()).toEqual([{ project_id: 'travel' }, { project_id: null }]);
    await memory.close();
  });

  it('distils the previous conversation at once when the direct session changes', async () => {
    const models = scriptedModels();
    const { memory, db } = memoryService(models, { summary_debounce_seconds: 600 });
    memory.buffer({ agentId: 'ana', conversationId: 'monday', user: 'first session' });
    memory.buffer({ agentId: 'ana', conversationId: 'tuesday', user: 'second session' });
    await vi.advanceTimersByTimeAsync(0);
    expect(models.calls).toHaveLength(1);
    expect(models.calls[0]!.prompt).toContain('first session');
    expect(memory.transcript.pendingCount('ana', 'monday')).toBe(0);
    expect(memory.transcript.pendingCount('ana', 'tuesday')).toBe(1);
    expect(count(db, 'memory_episodes')).toBe(1);
    await memory.close();
  });

  it('records delegated work without replacing or flushing the direct conversation (rule 4)', async () => {
    const models = scriptedModels();
    const { memory } = memoryService(models, { summary_debounce_seconds: 600 });
    memory.buffer({ agentId: 'ana', conversationId: 'chat', user: 'direct talk' });
    memory.recordDelegated({ agentId: 'ana', conversationId: 'job-1', user: 'research flights', assistant: 'found three' });
    await vi.advanceTimersByTimeAsync(0);
    expect(models.calls).toHaveLength(0);
    // the direct conversation is still the active one: a direct turn in it changes nothing
    memory.buffer({ agentId: 'ana', conversationId: 'chat', user: 'more direct talk' });
    await vi.advanceTimersByTimeAsync(0);
    expect(models.calls).toHaveLength(0);
    expect(memory.transcript.pendingCount('ana')).toBe(3);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(models.calls).toHaveLength(2);
    expect(memory.transcript.pendingCount('ana')).toBe(0);
    await memory.close();
  });

  it('keeps signals pending while no model is available, and distils them later', async () => {
    const models = scriptedModels();
    models.available = false;
    const { memory, db } = memoryService(models, { summary_debounce_seconds: 10 });
    const ingested = await memory.ingest({ agentId: 'ana', conversationId: 'c1', turns: [{ user: 'I moved to Porto', assistant: 'Welcome!' }] });
    expect(ingested.extraction).toBe('model_unavailable');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(count(db, 'memory_signals')).toBe(1);
    expect(await memory.flush('ana')).toMatchObject({ status: 'model_unavailable', pending: 1, signals_distilled: 0 });
    models.available = true;
    expect(await memory.flush('ana')).toMatchObject({
      status: 'distilled',
      conversations: 1,
      signals_distilled: 1,
      pending: 0,
      episodes_added: 1,
      facts_added: 1,
    });
    await memory.close();
  });

  it('reschedules pending signals found at start', async () => {
    const models = scriptedModels();
    models.available = false;
    const { memory, db } = memoryService(models, { summary_debounce_seconds: 60 });
    memory.buffer({ agentId: 'ana', conversationId: 'c1', user: 'left pending' });
    await memory.close();
    models.available = true;
    const { MemoryService } = await import('../../../companion/src/memory/service.js');
    const { silentLogger } = await import('../../../companion/src/logger.js');
    const restarted = new MemoryService({ db, settings: () => ({ ...memory.settings() }), models, log: silentLogger });
    restarted.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(count(db, 'memory_signals')).toBe(0);
    expect(count(db, 'memory_episodes')).toBe(1);
    await restarted.close();
  });
});

describe('extraction results', () => {
  it('merges a duplicate fact instead of adding it, and applies identity changes', async () => {
    const models = scriptedModels(() =>
      sampleExtraction({ facts: ['Ana prefers trains to planes', 'Ana has a cat called Miso.'], identity: [{ key: 'city', value: 'Lisbon' }] }),
    );
    const { memory, db } = memoryService(models);
    memory.editor.pin('ana', 'Ana prefers trains to planes.');
    memory.editor.setIdentity('ana', 'name', 'Ana Sousa');
    memory.buffer({ agentId: 'ana', conversationId: 'c1', user: 'trains please' });
    const flushed = await memory.flush('ana', 'c1');
    expect(flushed).toMatchObject({ facts_added: 1, facts_merged: 1 });
    expect(db.prepare('SELECT text, status, support_count FROM memory_facts ORDER BY id').all()).toEqual([
      { text: 'Ana prefers trains to planes.', status: 'pinned', support_count: 2 },
      { text: 'Ana has a cat called Miso.', status: 'candidate', support_count: 1 },
    ]);
    expect(memory.manager.identity('ana').map(({ key, value, source }) => ({ key, value, source }))).toEqual([
      { key: 'city', value: 'Lisbon', source: 'extraction' },
      { key: 'name', value: 'Ana Sousa', source: 'user' },
    ]);
    expect(memory.manager.entities('ana', 10)).toMatchObject([{ name: 'Lisbon', kind: 'place', mentions: 1 }]);
    await memory.close();
  });

  it('splits a pass the model refuses as too long, and drops signals after repeated unusable answers', async () => {
    let refusals = 0;
    const models = scriptedModels();
    const real = models.extraction.bind(models);
    models.extraction = async () => {
      const runner = (await real())!;
      return {
        ...runner,
        contextSize: 1800,
        async run(call) {
          if (call.prompt.length > 600) {
            refusals++;
            const { HearthError } = await import('../../../companion/src/errors.js');
            throw new HearthError('context_length_exceeded');
          }
          return runner.run(call);
        },
      };
    };
    const { memory, db } = memoryService(models);
    await memory.ingest({
      agentId: 'ana',
      conversationId: 'long',
      turns: Array.from({ length: 12 }, (_, index) => ({ user: `turn ${index} ${'words '.repeat(30)}`, assistant: 'ok' })),
    });
    const flushed = await memory.flush('ana', 'long');
    expect(refusals).toBeGreaterThan(0);
    expect(flushed.pending).toBe(0);
    expect(flushed.signals_distilled).toBe(12);
    expect(count(db, 'memory_episodes')).toBeGreaterThan(1);

    const broken = scriptedModels(() => 'not the schema');
    const second = memoryService(broken);
    second.memory.buffer({ agentId: 'ana', conversationId: 'x', user: 'hello' });
    for (let attempt = 0; attempt < 3; attempt++) await second.memory.flush('ana');
    expect(second.memory.transcript.pendingCount('ana')).toBe(0);
    expect(count(second.db, 'memory_turns')).toBe(1);
    await memory.close();
    await second.memory.close();
  });
});
