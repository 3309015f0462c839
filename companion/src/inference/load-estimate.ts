/**
 * How much memory a model would take with given load options, before it is loaded: the same
 * figures the engine counts when it loads one (its weights estimate, node-llama-cpp's estimate of
 * one sequence's context at the context size, and the default sequence count), read from the
 * GGUF header only.
 */
import type { GgufInsights, Llama } from 'node-llama-cpp';
import { loadBinding } from './binding.js';
import { estimateBytes } from './engine.js';
import { loadLlama, type GpuSetting } from './llama.js';
import type { ModelLoadOptions } from './load-options.js';
import { bytesPerSequence, chooseParallel } from './parallel.js';
import type { ModelFile } from './types.js';

export interface LoadEstimateInput {
  info: ModelFile;
  /** The options the model would load with (its own settings over the defaults). */
  options: ModelLoadOptions;
  gpu: GpuSetting;
  /** The engine's memory budget, and what the other loaded models hold of it. */
  budgetBytes: number;
  usedBytes: number;
}

export interface LoadEstimate {
  /** The context the model was trained on; the context size is capped there. */
  trainedContext: number | null;
  contextSize: number;
  /** Whether a GPU backend is in use (models.gpu auto, with a GPU llama.cpp can use). */
  gpu: boolean;
  totalLayers: number;
  /** Layers that would be offloaded to the GPU ('auto' resolved against its free memory). */
  gpuLayers: number;
  /** Sequences ('auto' resolved as the engine does, against the memory left now; a set count lowered to what that memory holds). */
  parallel: number;
  /** The weights and a margin for compute buffers: what the engine makes room for before loading. */
  weightsBytes: number;
  /** The context state of every sequence at the context size. */
  contextBytes: number;
  /** Of weights and contexts, what would sit in GPU memory. */
  gpuBytes: number;
  /** What the engine would count against its memory budget once loaded (contexts on a GPU are not counted). */
  budgetShareBytes: number;
}

const insightsCache = new Map<string, Promise<GgufInsights>>();

/** The GGUF header's insights, read once per file version (a few of them kept). */
function insightsOf(info: ModelFile, llama: Llama): Promise<GgufInsights> {
  const key = `${info.path}:${info.sizeBytes}`;
  let insights = insightsCache.get(key);
  if (!insights) {
    insights = loadBinding().then(async ({ GgufInsights, readGgufFileInfo }) =>
      GgufInsights.from(await readGgufFileInfo(info.path, { sourceType: 'filesystem', logWarnings: false }), llama),
    );
    insights.catch(() => insightsCache.delete(key));
    insightsCache.set(key, insights);
    while (insightsCache.size > 16) insightsCache.delete(insightsCache.keys().next().value!);
  }
  return insights;
}

export async function estimateLoad(input: LoadEstimateInput): Promise<LoadEstimate> {
  const { info, options } = input;
  const llama = await loadLlama(input.gpu);
  const insights = await insightsOf(info, llama);
  const trained = insights.trainContextSize ?? null;
  const contextSize = trained ? Math.min(options.contextSize, trained) : options.contextSize;
  const gpu = llama.gpu !== false && llama.supportsGpuOffloading;
  const gpuLayers = !gpu
    ? 0
    : options.gpuLayers === 'auto'
      ? await insights.configurationResolver.resolveModelGpuLayers('auto', {
          getVramState: () => llama.getVramState(),
          llamaVramPaddingSize: llama.vramPaddingSize,
          llamaGpu: llama.gpu,
          llamaSupportsGpuOffloading: llama.supportsGpuOffloading,
        })
      : Math.min(options.gpuLayers, insights.totalLayers);
  const perSequence = bytesPerSequence({ fileInsights: insights, gpuLayers }, contextSize, Math.min(512, contextSize));
  const weightsBytes = estimateBytes(info);
  const onGpu = gpuLayers > 0;
  const parallel = await chooseParallel(options.parallel, {
    llama,
    gpu: onGpu,
    bytesPerSequence: perSequence,
    budgetRoom: input.budgetBytes - input.usedBytes - weightsBytes,
  });
  const contextBytes = parallel * perSequence;
  const weightsOnGpu = onGpu ? insights.estimateModelResourceRequirements({ gpuLayers }).gpuVram : 0;
  return {
    trainedContext: trained,
    contextSize,
    gpu,
    totalLayers: insights.totalLayers,
    gpuLayers,
    parallel,
    weightsBytes,
    contextBytes,
    gpuBytes: onGpu ? weightsOnGpu + contextBytes : 0,
    budgetShareBytes: weightsBytes + (onGpu ? 0 : contextBytes),
  };
}
