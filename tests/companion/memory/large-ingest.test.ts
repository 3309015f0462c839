import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../../companion/src/memory/service.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { normaliseMemorySettings } from '../../../companion/src/memory/settings.js';
import { memoryService, scriptedModels } from './helpers.js';

/*
 * A large ingest does not freeze the server (7): it is written in chunks that yield to the event
 * loop between them, and it is still all or nothing: until it is acknowledged none of it is
 * visible, and if it fails (or the process dies) none of it stays.
 */

const TURNS = 10_000;
const bigIngest = (agentId: string, marker = 'ordinary') => ({
  agentId,
  conversationId: 'long',
  skipExtraction: true,
  turns: Array.from({ length: TURNS }, (_, index) => ({ user: `turn ${index} about ${marker} things ${'words '.repeat(60)}`, assistant: `reply ${index}` })),
});

describe('a 10,000-turn ingest', () => {
  it('lets other work run while it is written', async () => {
    const { memory } = memoryService(scriptedModels());
    let finished = false;
    let ranDuring = 0;
    const ingesting = memory.ingest(bigIngest('ana')).then(() => (finished = true));
    // Callbacks queued after the call began: they run during the ingest only if it yields.
    const ticker = setInterval(() => !finished && ranDuring++, 0);
    await new Promise<void>((resolve) => setImmediate(() => resolve()));
    const sawItRunning = !finished;
    await ingesting;
    clearInterval(ticker);
    expect(sawItRunning).toBe(true);
    expect(ranDuring).toBeGreaterThan(0);
    expect(memory.manager.status('ana').turns).toBe(TURNS);
    expect((await memory.search('ana', 'ordinary', 'transcript', 5)).length).toBe(5);
  });

  it('is invisible until acknowledged: every look while it is written sees none of it or all of it', async () => {
    const { memory } = memoryService(scriptedModels());
    await memory.ingest({ agentId: 'bo', conversationId: 'c', skipExtraction: true, turns: [{ user: 'an earlier turn about ordinary things' }] });
    const seen = new Set<number>();
    let done = false;
    const look = () => {
      seen.add(memory.manager.status('bo').turns);
      seen.add(memory.transcript.pendingCount('bo'));
      if (!done) setImmediate(look);
    };
    setImmediate(look);
    await memory.ingest({ ...bigIngest('bo'), skipExtraction: false });
    done = true;
    look();
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, TURNS, TURNS + 1].filter((count) => seen.has(count)));
    expect(seen.has(TURNS + 1)).toBe(true);
    expect([...seen].every((count) => [0, 1, TURNS, TURNS + 1].includes(count))).toBe(true);
    expect(memory.manager.agents().map((agent) => agent.agent_id)).toEqual(['bo']);
  });

  it('leaves nothing behind when it fails part-way', async () => {
    const { memory, db } = memoryService(scriptedModels());
    // The 7,000th turn fails inside SQLite, after several chunks were committed.
    db.exec(`CREATE TRIGGER fail_ingest AFTER INSERT ON memory_turns WHEN new.user_text LIKE 'turn 7000 %' BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;`);
    await expect(memory.ingest({ ...bigIngest('cy', 'doomed'), skipExtraction: false })).rejects.toThrow(/disk trouble/);
    expect(memory.manager.status('cy')).toMatchObject({ turns: 0, pending_signals: 0 });
    expect(await memory.search('cy', 'doomed', 'transcript', 5)).toEqual([]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM memory_turns').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM memory_signals').get()).toEqual({ n: 0 });
    // The agent still takes the next ingest.
    db.exec('DROP TRIGGER fail_ingest');
    await memory.ingest({ agentId: 'cy', conversationId: 'c', skipExtraction: true, turns: [{ user: 'after the failure, doomed no more' }] });
    expect((await memory.search('cy', 'doomed', 'transcript', 5)).map((item) => item.text)).toEqual(['user: after the failure, doomed no more']);
  });

  it('left half-written by a killed process is removed when memory starts again', async () => {
    const { memory, db } = memoryService(scriptedModels());
    db.exec(`CREATE TRIGGER stop_ingest AFTER INSERT ON memory_turns WHEN new.user_text LIKE 'turn 5000 %' BEGIN SELECT RAISE(ABORT, 'killed'); END;`);
    // As a kill would leave it: chunks committed, the cleanup never run.
    const original = (memory as unknown as { discardStaged(id: string): void }).discardStaged;
    (memory as unknown as { discardStaged: () => void }).discardStaged = () => undefined;
    await expect(memory.ingest(bigIngest('di', 'ghost'))).rejects.toThrow(/killed/);
    (memory as unknown as { discardStaged: typeof original }).discardStaged = original;
    db.exec('DROP TRIGGER stop_ingest');
    expect((db.prepare('SELECT COUNT(*) AS n FROM memory_turns').get() as { n: number }).n).toBeGreaterThan(0);
    await memory.close();

    const again = new MemoryService({ db, settings: () => normaliseMemorySettings({}), models: scriptedModels(), log: silentLogger });
    again.start();
    await again.close();
    expect(db.prepare('SELECT COUNT(*) AS n FROM memory_turns').get()).toEqual({ n: 0 });
    expect(again.manager.status('di').turns).toBe(0);
    expect(await again.search('di', 'ghost', 'transcript', 5)).toEqual([]);
  });
});
