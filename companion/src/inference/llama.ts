import type { Llama } from 'node-llama-cpp';
import { loadBinding } from './binding.js';

export type GpuSetting = 'auto' | 'cpu';

let shared: Promise<Llama> | undefined;

/** One llama.cpp binding per process; loading it twice would double its thread pools. */
export function loadLlama(gpu: GpuSetting): Promise<Llama> {
  shared ??= loadBinding()
    .then(({ getLlama, LlamaLogLevel }) => getLlama({ gpu: gpu === 'cpu' ? false : 'auto', build: 'never', logLevel: LlamaLogLevel.error }))
    .catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
  return shared;
}

/** Thread counts worth trying on this machine: one, half the cores, all of them. */
export function threadCandidates(cores: number): number[] {
  return [...new Set([1, Math.max(1, Math.floor(cores / 2)), Math.max(1, cores)])];
}
