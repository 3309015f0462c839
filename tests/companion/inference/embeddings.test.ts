import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Embeddings } from '../../../companion/src/inference/embeddings.js';
import { Engine, estimateBytes } from '../../../companion/src/inference/engine.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { generationRequest, tinyEmbeddingModelPath, tinyModelPath } from '../../helpers/models.js';
import { engineOptions } from '../../helpers/engine.js';

async function modelFile(id: string, path: Promise<string>, capabilities: ModelFile['capabilities']): Promise<ModelFile> {
  const resolved = await path;
  return { id, path: resolved, sizeBytes: statSync(resolved).size, capabilities };
}

const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
});

function setUp(memoryBudgetBytes: number) {
  const engine = new Engine(engineOptions({ contextSize: 256, parallel: 2, memoryBudgetBytes }));
  engines.push(engine);
  const embeddings = new Embeddings(engine, () => ({ threads: 1, contextSize: 256, parallel: 2, queueLimit: 8, idleUnloadSeconds: 0 }), silentLogger);
  return { engine, embeddings };
}

describe('embedding models share the engine’s loader and memory budget', () => {
  it('counts an embedding model against the budget: a chat model needing the room unloads it while idle, and back', async () => {
    const embed = await modelFile('tiny-embed', tinyEmbeddingModelPath(), ['embedding']);
    const chat = await modelFile('tiny', tinyModelPath(), ['chat', 'tools']);
    // Room for one of the two models at a time.
    const { engine, embeddings } = setUp(Math.ceil(estimateBytes(embed) * 1.5));

    const first = await embeddings.embed(embed, ['hello there', 'general kenobi']);
    expect(first.vectors).toHaveLength(2);
    expect(engine.isLoaded('tiny-embed')).toBe(true);
    expect(engine.status().map((entry) => entry.id)).toEqual(['tiny-embed']);

    await engine.run(chat, generationRequest('tiny', { text: 'hi', maxTokens: 2 }));
    expect(engine.isLoaded('tiny')).toBe(true);
    expect(engine.isLoaded('tiny-embed')).toBe(false);

    const again = await embeddings.embed(embed, ['hello there']);
    expect(Array.from(again.vectors[0]!)).toEqual(Array.from(first.vectors[0]!));
    expect(engine.isLoaded('tiny-embed')).toBe(true);
    expect(engine.isLoaded('tiny')).toBe(false);
  });

  it('unload() releases an embedding model like a chat model; the next request loads it again', async () => {
    const embed = await modelFile('tiny-embed', tinyEmbeddingModelPath(), ['embedding']);
    const { engine, embeddings } = setUp(1024 * 1024 * 1024);
    await embeddings.embed(embed, ['one']);
    expect(await engine.unload('tiny-embed')).toBe(true);
    expect(engine.isLoaded('tiny-embed')).toBe(false);
    expect((await embeddings.embed(embed, ['one'])).dimensions).toBe(64);
    expect(engine.isLoaded('tiny-embed')).toBe(true);
  });

  it('refuses a chat model, and cuts a long input to the context only when asked to', async () => {
    const chat = await modelFile('tiny', tinyModelPath(), ['chat', 'tools']);
    const embed = await modelFile('tiny-embed', tinyEmbeddingModelPath(), ['embedding']);
    const { embeddings } = setUp(1024 * 1024 * 1024);
    await expect(embeddings.embed(chat, ['hi'])).rejects.toMatchObject({ code: 'model_not_embedding', param: 'model' });
    const long = 'word '.repeat(600);
    await expect(embeddings.embed(embed, [long])).rejects.toMatchObject({ code: 'context_length_exceeded', param: 'input[0]' });
    const cut = await embeddings.embed(embed, [long], { truncate: true });
    expect(cut.promptTokens).toBeLessThanOrEqual(255);
    expect(cut.promptTokens).toBeGreaterThan(200);
  });
});
