/** Loading and unloading around the batching engine: memory budget, idle unload, a refused budget. */
import { copyFileSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine, type EngineOptions } from '../../../companion/src/inference/engine.js';
import type { GenerationRequest, ModelFile } from '../../../companion/src/inference/types.js';
import { generationRequest, tinyModelPath } from '../../helpers/models.js';
import { engineOptions } from '../../helpers/engine.js';

const MiB = 2 ** 20;

async function twoModels(): Promise<[ModelFile, ModelFile]> {
  const path = await tinyModelPath();
  const copy = join(mkdtempSync(join(tmpdir(), 'hearth-engine-')), 'other.gguf');
  copyFileSync(path, copy);
  const file = (id: string, at: string): ModelFile => ({ id, path: at, sizeBytes: statSync(at).size, capabilities: ['chat'] });
  return [file('tiny', path), file('other', copy)];
}

function engine(options: Partial<EngineOptions>): Engine {
  return new Engine(engineOptions({ contextSize: 256, queueLimit: 4, ...options }));
}

const ask = (model: string): GenerationRequest => generationRequest(model);

describe('model lifecycle', () => {
  it('unloads the idle model when the next one would pass the memory budget', async () => {
    const [tiny, other] = await twoModels();
    const subject = engine({ memoryBudgetBytes: 100 * MiB });
    try {
      await subject.run(tiny, ask(tiny.id));
      expect(subject.isLoaded(tiny.id)).toBe(true);
      await subject.run(other, ask(other.id));
      expect(subject.isLoaded(other.id)).toBe(true);
      expect(subject.isLoaded(tiny.id)).toBe(false);
    } finally {
      await subject.close();
    }
  });

  it('refuses a model that needs more than the whole budget, saying how to raise it', async () => {
    const [tiny] = await twoModels();
    const subject = engine({ memoryBudgetBytes: 10 * MiB });
    try {
      await expect(subject.run(tiny, ask(tiny.id))).rejects.toMatchObject({ code: 'model_load_failed', message: expect.stringMatching(/memory_budget_mb/) });
    } finally {
      await subject.close();
    }
  });

  it('unloads a model left idle for idle_unload_seconds', async () => {
    const [tiny] = await twoModels();
    const subject = engine({ idleUnloadSeconds: 1 });
    try {
      await subject.run(tiny, ask(tiny.id));
      expect(subject.isLoaded(tiny.id)).toBe(true);
      await expect.poll(() => subject.isLoaded(tiny.id), { timeout: 10_000, interval: 100 }).toBe(false);
    } finally {
      await subject.close();
    }
  });

  it('reports the sequence count, the thread choice and the steps of a loaded model', async () => {
    const [tiny] = await twoModels();
    const subject = engine({ threads: 'auto', parallel: 'auto' });
    try {
      await subject.run(tiny, ask(tiny.id));
      const [status] = subject.status();
      expect(status!.sequences).toBeGreaterThanOrEqual(1);
      expect(status!.steps).toBeGreaterThanOrEqual(4);
      expect(status!.threadChoices.map((choice) => choice.tokens)).toContain('1');
    } finally {
      await subject.close();
    }
  });
});
