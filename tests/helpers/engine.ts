import { afterAll } from 'vitest';
import { Engine, type EngineOptions } from '../../companion/src/inference/engine.js';
import type { GenerationRequest, HistoryItem, ModelFile } from '../../companion/src/inference/types.js';
import { ServerBuild } from '../../companion/src/inference/server/build-service.js';
import { engineOptions } from './generation.js';
import { tempFolder } from './temp.js';

// Kept in generation.ts, which a benchmark can import (this file registers vitest hooks).
export { engineOptions };

/** engineOptions on the llama-server engine, with a run folder of its own. */
export function serverEngineOptions(extra: Partial<EngineOptions> = {}): EngineOptions {
  return engineOptions({ engine: 'server', build: new ServerBuild(), runDir: tempFolder('engine-run'), ...extra });
}

/** Makes engines for the tests of a file: each one made is closed after the file's last test. */
export function engineMaker(): (options: EngineOptions) => Engine {
  const engines: Engine[] = [];
  afterAll(async () => {
    for (const created of engines.splice(0)) await created.close();
  });
  return (options) => {
    const created = new Engine(options);
    engines.push(created);
    return created;
  };
}

/** The llama-server prompt counters of model `id` (tokens evaluated and reused so far), zero before it loads. */
export function promptCounters(engine: Engine, id = 'tiny'): { evaluated: number; reused: number } {
  return engine.status().find((entry) => entry.id === id)?.promptTokens ?? { evaluated: 0, reused: 0 };
}

/**
 * One turn of a conversation: the history plus a new user message, asked as `ask` builds the
 * request; returns the history with the answer, and what the prompt cost by llama-server's own
 * counters (evaluated and reused tokens), not by the clock.
 */
export async function conversationTurn(
  engine: Engine,
  model: ModelFile,
  history: HistoryItem[],
  text: string,
  ask: (history: HistoryItem[]) => GenerationRequest,
): Promise<{ history: HistoryItem[]; text: string; promptTokens: number; evaluated: number; reused: number }> {
  const before = promptCounters(engine, model.id);
  const next: HistoryItem[] = [...history, { role: 'user', text }];
  const result = await engine.run(model, ask(next));
  const after = promptCounters(engine, model.id);
  return {
    history: [...next, { role: 'assistant', text: result.text, toolCalls: [] }],
    text: result.text,
    promptTokens: result.promptTokens,
    evaluated: after.evaluated - before.evaluated,
    reused: after.reused - before.reused,
  };
}
