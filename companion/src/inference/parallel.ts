import { freemem } from 'node:os';
import type { Llama, LlamaModel } from 'node-llama-cpp';

/** What the default sequence count depends on. */
export interface ParallelInput {
  /** Memory one more sequence needs (its KV cache at the context size), in bytes. */
  bytesPerSequence: number;
  /** Memory the sequences may use together: what the budget and the free memory leave after the weights. */
  availableBytes: number;
  /** Whether the model runs on a GPU. */
  gpu: boolean;
  cores: number;
}

/** The share of available memory the KV caches of one model may take by default. */
export const SEQUENCE_MEMORY_SHARE = 0.5;

/**
 * The default `models.parallel`: as many sequences as the model's KV cache fits in half the memory
 * left, capped where more concurrent streams stop paying on the hardware (a GPU keeps gaining up to
 * 32 streams; a CPU up to about 8 per core, at most 16), and at least one.
 */
export function defaultParallel(input: ParallelInput): number {
  const cap = input.gpu ? 32 : Math.max(2, Math.min(16, 8 * input.cores));
  if (!(input.bytesPerSequence > 0)) return cap;
  const fits = Math.floor((Math.max(0, input.availableBytes) * SEQUENCE_MEMORY_SHARE) / input.bytesPerSequence);
  return Math.max(1, Math.min(cap, fits));
}

/**
 * A `parallel` the owner set: lowered to the sequences whose KV caches fit the memory left (all of
 * it, not the default's half), at least one. Sixty-four sequences at a long context on a small
 * machine would otherwise never finish loading.
 */
export function fittingParallel(asked: number, input: Pick<ParallelInput, 'bytesPerSequence' | 'availableBytes'>): number {
  if (!(input.bytesPerSequence > 0)) return asked;
  return Math.max(1, Math.min(asked, Math.floor(Math.max(0, input.availableBytes) / input.bytesPerSequence)));
}

/**
 * The sequences a model loads with: `models.parallel` as asked (`'auto'`: the default; a count: as
 * many of them as fit) against the memory left for their KV caches: the GPU's free memory, or on
 * the CPU what the budget leaves (`budgetRoom`) as far as the machine has it free.
 */
export async function chooseParallel(
  asked: number | 'auto',
  input: { llama: Pick<Llama, 'getVramState' | 'cpuMathCores'>; gpu: boolean; bytesPerSequence: number; budgetRoom: number },
): Promise<number> {
  const { llama, gpu } = input;
  const availableBytes = gpu ? (await llama.getVramState()).free : Math.min(input.budgetRoom, freemem());
  const sizes = { bytesPerSequence: input.bytesPerSequence, availableBytes, gpu, cores: llama.cpuMathCores };
  return asked === 'auto' ? defaultParallel(sizes) : fittingParallel(asked, sizes);
}

/** Memory one more sequence adds to the context, by node-llama-cpp's own estimate. */
export function bytesPerSequence(
  model: Pick<LlamaModel, 'fileInsights' | 'gpuLayers'>,
  contextSize: number,
  batchSize: number,
  gpuLayers = model.gpuLayers,
): number {
  const estimate = (sequences: number) => {
    const requirement = model.fileInsights.estimateContextResourceRequirements({ contextSize, modelGpuLayers: gpuLayers, sequences, batchSize });
    return gpuLayers > 0 ? requirement.gpuVram : requirement.cpuRam;
  };
  return Math.max(0, estimate(2) - estimate(1));
}
