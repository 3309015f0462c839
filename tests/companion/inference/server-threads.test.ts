/**
 * Threads on `threads: auto` for the llama-server engine: a process starts with the cores other
 * programs leave free, and an idle model whose machine has changed restarts with the new count,
 * keeping its conversation (the next turn evaluates only its new tokens: llama-server's own
 * counters). The machine is a stand-in watch the test sets; the process is real. Needs the
 * llama-server build.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../companion/src/inference/engine.js';
import type { ThreadWatch } from '../../../companion/src/inference/server/threads.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../../../companion/src/inference/types.js';
import { conversationTurn, engineMaker, serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyModelFile } from '../../helpers/models.js';
import { untilTrue } from '../../helpers/until.js';

let model: ModelFile;
const makeEngine = engineMaker();

beforeAll(async () => {
  model = await tinyModelFile();
});

/** A machine whose other programs keep `others` cores busy, as the test says. */
class Machine implements ThreadWatch {
  others = 0;
  othersOn(cores: number): number {
    return Math.min(cores, this.others);
  }
  spanSeconds(): number {
    return 60;
  }
  sample(): boolean {
    return true;
  }
}

const ask = (history: HistoryItem[]): GenerationRequest => generationRequest('tiny', { history, maxTokens: 8, sampling: { seed: 5, temperature: 0 } });
const turn = (subject: Engine, history: HistoryItem[], text: string) => conversationTurn(subject, model, history, text, ask);
const system: HistoryItem = { role: 'system', text: 'You are a careful assistant. '.repeat(30) };
/** The -t value a llama-server process was started with. */
const threadFlag = (pid: number) => {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return Number(args[args.indexOf('-t') + 1]);
};

describe('threads for a llama-server process on auto', () => {
  it('start at the free cores and follow the machine while the model is idle, keeping its conversation', async () => {
    const machine = new Machine();
    machine.others = 1;
    const engine = makeEngine(serverEngineOptions({ threads: 'auto', threadWatch: machine, rethread: { everyMs: 100, idleMs: 0, apartMs: 0 } }));
    const first = await turn(engine, [system], 'First question');
    const before = engine.status()[0]!;
    expect(threadFlag(before.process!.pid)).toBe(before.threads);

    // The other program ends: the idle model restarts with every core.
    machine.others = 0;
    await untilTrue(() => engine.status()[0]?.process?.pid !== before.process!.pid, 'a restart with more threads');
    const after = engine.status()[0]!;
    // One core was busy elsewhere: the model had started on the others (one, on a 2-core machine).
    expect(before.threads).toBe(Math.max(1, after.threads - 1));
    expect(after.threads).toBeGreaterThan(before.threads);
    expect(threadFlag(after.process!.pid)).toBe(after.threads);
    expect(after.process!.restarts).toBe(0);

    // Its conversation was saved before the restart: the next turn reads only its new tokens.
    const second = await turn(engine, first.history, 'Second question');
    expect(second.reused).toBeGreaterThanOrEqual(first.promptTokens);
    expect(second.evaluated).toBeLessThan(second.promptTokens - first.promptTokens + 12);
  });

  it('uses a fixed count as given, whatever the machine does', async () => {
    const machine = new Machine();
    machine.others = 1;
    const engine = makeEngine(serverEngineOptions({ threads: 2, threadWatch: machine, rethread: { everyMs: 50, idleMs: 0, apartMs: 0 } }));
    await turn(engine, [system], 'A question');
    const status = engine.status()[0]!;
    expect(status.threads).toBe(2);
    expect(threadFlag(status.process!.pid)).toBe(2);
  });
});
