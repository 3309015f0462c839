import { afterEach, describe, expect, it, vi } from 'vitest';
import { SALIENCE_HALF_LIFE_DAYS } from '../../../companion/src/memory/consolidation.js';
import { memoryService, sampleExtraction, scriptedModels } from './helpers.js';

const DAY = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
});

function episode(
  db: ReturnType<typeof memoryService>['db'],
  summary: string,
  topics: string[],
  options: { agent?: string; ageDays?: number; salience?: number } = {},
) {
  const at = Date.now() - (options.ageDays ?? 0) * DAY;
  db.prepare(
    `INSERT INTO memory_episodes (agent_id, conversation_id, summary, topics, decisions, salience, created_at, updated_at, decayed_at) VALUES (?, 'c', ?, ?, '[]', ?, ?, ?, ?)`,
  ).run(options.agent ?? 'ana', summary, JSON.stringify(topics), options.salience ?? 1, at, at, at);
}

describe('consolidation (docs/memory.md rule 5)', () => {
  it('lowers salience over time, merges similar episodes, promotes supported facts and prunes under the floor', async () => {
    const { memory, db } = memoryService(scriptedModels(), { salience_floor: 0.3, episode_retention_days: 0 });
    episode(db, 'Ana trained for the Lisbon marathon', ['running', 'marathon'], { ageDays: SALIENCE_HALF_LIFE_DAYS });
    episode(db, 'Ana trained for the Lisbon marathon again', ['running', 'marathon']);
    episode(db, 'Ana fixed her bicycle brakes', ['bicycle'], { ageDays: 2 * SALIENCE_HALF_LIFE_DAYS });
    episode(db, 'Bo trained for the Lisbon marathon', ['running', 'marathon'], { agent: 'bo' });
    memory.records.addFact('ana', 'Ana runs every morning.', { status: 'candidate', source: 'extraction' });
    memory.records.addFact('ana', 'Ana runs every morning', { status: 'candidate', source: 'extraction' });
    memory.records.addFact('ana', 'Ana once ate sushi.', { status: 'candidate', source: 'extraction' });
    db.prepare(`UPDATE memory_facts SET decayed_at = ? WHERE text = 'Ana once ate sushi.'`).run(Date.now() - 3 * SALIENCE_HALF_LIFE_DAYS * DAY);
    memory.editor.pin('ana', 'Ana is allergic to peanuts.');
    db.prepare(`UPDATE memory_facts SET decayed_at = ? WHERE text = 'Ana is allergic to peanuts.'`).run(Date.now() - 10 * SALIENCE_HALF_LIFE_DAYS * DAY);

    const report = await memory.consolidate('ana');
    expect(report).toMatchObject({ agents: 1, episodes_merged: 1, facts_promoted: 1, episodes_pruned: 1, facts_pruned: 1, turns_pruned: 0 });
    const episodes = memory.manager.episodes('ana', undefined, 10);
    expect(episodes).toHaveLength(1);
    expect(episodes[0]).toMatchObject({ summary: 'Ana trained for the Lisbon marathon again', topics: ['running', 'marathon'], merged_count: 2 });
    // merging renews salience; the quarter-salience bicycle episode fell under the floor
    expect(episodes[0]!.salience).toBeGreaterThan(0.5);
    const facts = memory.manager.facts('ana', undefined, undefined, 10).map(({ text, status }) => ({ text, status }));
    expect(facts).toEqual([
      { text: 'Ana is allergic to peanuts.', status: 'pinned' },
      { text: 'Ana runs every morning.', status: 'pinned' },
    ]);
    // another agent's memory is untouched by an agent's consolidation
    expect(memory.manager.episodes('bo', undefined, 10)[0]).toMatchObject({ salience: 1 });
    await memory.close();
  });

  it('prunes episodes and distilled transcript past episode_retention_days, keeping turns still pending', async () => {
    const models = scriptedModels();
    models.available = false;
    const { memory, db } = memoryService(models, { episode_retention_days: 30, salience_floor: 0 });
    await memory.ingest({ agentId: 'ana', conversationId: 'old', turns: [{ user: 'old distilled turn' }], skipExtraction: true });
    await memory.ingest({ agentId: 'ana', conversationId: 'old-pending', turns: [{ user: 'old pending turn' }] });
    await memory.ingest({ agentId: 'ana', conversationId: 'new', turns: [{ user: 'recent turn' }], skipExtraction: true });
    db.prepare(`UPDATE memory_turns SET created_at = ? WHERE conversation_id LIKE 'old%'`).run(Date.now() - 31 * DAY);
    episode(db, 'Old episode', ['old'], { ageDays: 31 });
    episode(db, 'New episode', ['new'], { ageDays: 1 });
    const report = await memory.consolidate('ana');
    expect(report).toMatchObject({ turns_pruned: 1, episodes_pruned: 1 });
    expect(memory.transcript.list('ana', { limit: 10 }).map((turn) => turn.user)).toEqual(['recent turn', 'old pending turn']);
    expect(memory.manager.episodes('ana', undefined, 10).map((row) => row.summary)).toEqual(['New episode']);
    await memory.close();
  });

  it('distils pending signals first when a model is available', async () => {
    const { memory } = memoryService(
      scriptedModels(() => sampleExtraction()),
      { summary_debounce_seconds: 3600 },
    );
    memory.buffer({ agentId: 'ana', conversationId: 'c', user: 'hi' });
    const report = await memory.consolidate();
    expect(report.signals_distilled).toBe(1);
    expect(memory.transcript.pendingCount('ana')).toBe(0);
    await memory.close();
  });

  it('runs on schedule only after the interval and only when idle', async () => {
    vi.useFakeTimers({ now: new Date('2025-01-01T00:00:00Z') });
    const { memory, db } = memoryService(scriptedModels(), { consolidation_interval_hours: 2, summary_debounce_seconds: 3600 });
    const last = () => Number((db.prepare(`SELECT value FROM memory_state WHERE key = 'consolidated_at'`).get() as { value: string }).value);
    memory.start();
    const started = last();
    await vi.advanceTimersByTimeAsync(2 * 3_600_000 - 1000);
    expect(last()).toBe(started);
    // activity just before the run is due postpones it
    await memory.ingest({ agentId: 'ana', conversationId: 'c', turns: [{ user: 'busy' }], skipExtraction: true });
    await vi.advanceTimersByTimeAsync(1000);
    expect(last()).toBe(started);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(last()).toBeGreaterThan(started);
    const ranAt = last();
    // an on-demand run counts: the next scheduled run is an interval later
    await vi.advanceTimersByTimeAsync(3_600_000);
    await memory.consolidate('ana');
    const manual = last();
    expect(manual).toBeGreaterThan(ranAt);
    await vi.advanceTimersByTimeAsync(2 * 3_600_000 - 1000);
    expect(last()).toBe(manual);
    await vi.advanceTimersByTimeAsync(2000);
    expect(last()).toBeGreaterThan(manual);
    await memory.close();
  });
});
