import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Embeddings } from '../../../companion/src/inference/embeddings.js';
import { Engine, estimateBytes } from '../../../companion/src/inference/engine.js';
import { estimateLoad } from '../../../companion/src/inference/load-estimate.js';
import { loadOptionsFor } from '../../../companion/src/inference/load-options.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { tinyEmbeddingModelPath, tinyModelPath } from '../../helpers/models.js';

/* A model's own load options (config's models.overrides) over the engine's defaults, for chat and embedding models alike. */

const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
});

describe('loadOptionsFor', () => {
  it("takes what a model's entry sets and the defaults for the rest", () => {
    const defaults = {
      contextSize: 4096,
      threads: 'auto' as const,
      parallel: 4,
      overrides: { tiny: { contextSize: 1024, gpuLayers: 0 }, other: { threads: 2 } },
    };
    expect(loadOptionsFor(defaults, 'tiny')).toEqual({ contextSize: 1024, threads: 'auto', parallel: 4, gpuLayers: 0 });
    expect(loadOptionsFor(defaults, 'other')).toEqual({ contextSize: 4096, threads: 2, parallel: 4, gpuLayers: 'auto' });
    expect(loadOptionsFor({ ...defaults, overrides: undefined }, 'tiny')).toEqual({ contextSize: 4096, threads: 'auto', parallel: 4, gpuLayers: 'auto' });
  });

  it('runs no more threads than the machine has cores', () => {
    const defaults = { contextSize: 4096, threads: 256, parallel: 64, overrides: { own: { threads: 128 }, few: { threads: 1 } } };
    expect(loadOptionsFor(defaults, 'any', 2).threads).toBe(2);
    expect(loadOptionsFor(defaults, 'own', 2).threads).toBe(2);
    expect(loadOptionsFor(defaults, 'few', 2).threads).toBe(1);
    expect(loadOptionsFor({ ...defaults, threads: 'auto' }, 'any', 2).threads).toBe('auto');
  });
});

describe('the load estimate', () => {
  it('lowers a parallel setting to the sequences the memory budget holds', async () => {
    const path = await tinyModelPath();
    const info: ModelFile = { id: 'tiny', path, sizeBytes: statSync(path).size, capabilities: ['chat'] };
    const options = { contextSize: 1048576, threads: 256, parallel: 1, gpuLayers: 0 };
    const one = await estimateLoad({ info, options, gpu: 'cpu', budgetBytes: 2 ** 40, usedBytes: 0 });
    // The trained context bounds the context size.
    expect(one.contextSize).toBe(one.trainedContext);
    // A budget with room for three and a half sequences besides the weights.
    const budgetBytes = estimateBytes(info) + 3.5 * one.contextBytes;
    const estimate = await estimateLoad({ info, options: { ...options, parallel: 64 }, gpu: 'cpu', budgetBytes, usedBytes: 0 });
    expect(estimate.parallel).toBe(3);
    expect(estimate.budgetShareBytes).toBeLessThanOrEqual(budgetBytes);
  });
});

describe('an embedding model', () => {
  it('loads with its own context size, threads and contexts', async () => {
    const path = await tinyEmbeddingModelPath();
    const info: ModelFile = { id: 'tiny-embed', path, sizeBytes: statSync(path).size, capabilities: ['embedding'] };
    const settings = { threads: 2, contextSize: 256, parallel: 2, queueLimit: 8, idleUnloadSeconds: 0 };
    const engine = new Engine({ gpu: 'cpu', ...settings, memoryBudgetBytes: 1024 ** 3, log: silentLogger });
    engines.push(engine);
    const embeddings = new Embeddings(
      engine,
      () => ({ ...settings, overrides: { 'tiny-embed': { contextSize: 512, threads: 1, parallel: 1 } } }),
      silentLogger,
    );
    await embeddings.embed(info, ['hello']);
    expect(engine.status().find((model) => model.id === 'tiny-embed')).toMatchObject({ contextSize: 512, threads: 1, sequences: 1 });
  });
});
