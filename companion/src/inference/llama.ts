import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from 'node-llama-cpp';

export type GpuSetting = 'auto' | 'cpu';

let shared: Promise<Llama> | undefined;

/** One llama.cpp binding per process; loading it twice would double its thread pools. */
export function loadLlama(gpu: GpuSetting): Promise<Llama> {
  shared ??= getLlama({ gpu: gpu === 'cpu' ? false : 'auto', build: 'never', logLevel: LlamaLogLevel.error }).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

/**
 * Measures single-stream decode speed for each candidate thread count and returns the fastest.
 * On small CPUs more threads are often slower (2 cores: 1 thread ran 2.5x faster than 2), so
 * the count is measured per model rather than assumed.
 */
export async function measureThreads(model: LlamaModel, candidates: number[]): Promise<{ threads: number; tokensPerSecond: Record<number, number> }> {
  const tokensPerSecond: Record<number, number> = {};
  const prompt = model.tokenize('The quick brown fox jumps over the lazy dog. '.repeat(4));
  for (const threads of candidates) {
    const context = await model.createContext({ contextSize: 256, sequences: 1, threads });
    try {
      const sequence = context.getSequence();
      const generated: number[] = [];
      const started = performance.now();
      for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
        generated.push(token);
        if (generated.length >= 24) break;
      }
      tokensPerSecond[threads] = (generated.length / (performance.now() - started)) * 1000;
    } finally {
      await context.dispose();
    }
  }
  const threads = candidates.reduce((best, next) => (tokensPerSecond[next]! > tokensPerSecond[best]! ? next : best));
  return { threads, tokensPerSecond };
}

/** Thread counts worth measuring on this machine: one, half the cores, all of them. */
export function threadCandidates(cores: number): number[] {
  return [...new Set([1, Math.max(1, Math.floor(cores / 2)), Math.max(1, cores)])];
}
