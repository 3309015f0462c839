/**
 * Engine settings and generation requests as the tests and the benchmarks use them. Nothing here
 * registers vitest hooks, so a benchmark (a plain script) imports it too.
 */
import type { EngineOptions } from '../../companion/src/inference/engine.js';
import type { GenerationRequest } from '../../companion/src/inference/types.js';
import { silentLogger } from '../../companion/src/logger.js';

/**
 * Engine settings: the CPU, one thread, a 1,024-token context, one sequence, a queue of 8, no idle
 * unload, a 2 GiB budget and a silent log; `extra` overrides any of them.
 */
export function engineOptions(extra: Partial<EngineOptions> = {}): EngineOptions {
  return {
    gpu: 'cpu',
    threads: 1,
    contextSize: 1024,
    parallel: 1,
    queueLimit: 8,
    idleUnloadSeconds: 0,
    memoryBudgetBytes: 2 ** 31,
    log: silentLogger,
    ...extra,
  };
}

/** A plain text generation on `model`: one user message (`text`, default "Hello"), 4 tokens, no tools, no stop words; `extra` overrides. */
export function generationRequest(model: string, extra: Partial<GenerationRequest> & { text?: string } = {}): GenerationRequest {
  const { text = 'Hello', ...rest } = extra;
  return {
    model,
    history: [{ role: 'user', text }],
    maxTokens: 4,
    sampling: {},
    stop: [],
    tools: [],
    toolMode: { type: 'none' },
    output: { type: 'text' },
    signal: new AbortController().signal,
    ...rest,
  };
}
