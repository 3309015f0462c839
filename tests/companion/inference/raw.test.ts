/**
 * Raw prompts and fill-in-the-middle through the Engine, on the engine the project picks
 * (in process in the companion project, llama-server in the server-engine one): the prompt sent
 * without the chat template, with the model's own FIM tokens when there is a suffix, and the same
 * budget, stop texts, streaming, counts and cancel as chat.
 */
import { statSync } from 'node:fs';
import { getLlama } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { Engine } from '../../../companion/src/inference/engine.js';
import { planRaw } from '../../../companion/src/inference/raw-prompt.js';
import type { GenerationRequest, ModelFile, RawPrompt } from '../../../companion/src/inference/types.js';
import { engineOptions, serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyFimModelPath, tinyModelPath } from '../../helpers/models.js';

let plain: ModelFile;
let fim: ModelFile;
let engine: Engine;

const file = (id: string, path: string): ModelFile => ({ id, path, sizeBytes: statSync(path).size, capabilities: ['chat', 'completion', 'tools'] });

beforeAll(async () => {
  plain = file('tiny', await tinyModelPath());
  fim = file('tiny-fim', await tinyFimModelPath());
  engine = new Engine(process.env.HEARTH_ENGINE === 'server' ? serverEngineOptions() : engineOptions());
});

afterAll(async () => {
  await engine?.close();
});

const raw = (model: string, prompt: RawPrompt, extra: Partial<GenerationRequest> = {}): GenerationRequest =>
  generationRequest(model, { history: [], raw: prompt, maxTokens: 8, sampling: { temperature: 0 }, ...extra });

describe('raw prompts on the engine', () => {
  it('generates from the prompt alone, streams what it returns, and counts what it ran', async () => {
    const request = raw('tiny', { prompt: 'the water was' });
    const pieces: string[] = [];
    const result = await engine.run(plain, { ...request, onText: (delta) => pieces.push(delta) });
    expect(result.text.length).toBeGreaterThan(0);
    expect(pieces.join('')).toBe(result.text);
    expect(result).toMatchObject({ toolCalls: [], finishReason: 'length', completionTokens: 8 });
    // BOS and the prompt's own tokens, no chat template around them.
    expect(result.promptTokens).toBe(await engine.countTokens(plain, request));
    const chat = await engine.countTokens(plain, generationRequest('tiny', { text: 'the water was' }));
    expect(result.promptTokens).toBeLessThan(chat);
  });

  it('is deterministic at temperature 0 and stops before a stop text', async () => {
    const first = await engine.run(plain, raw('tiny', { prompt: 'one day' }, { maxTokens: 12 }));
    const again = await engine.run(plain, raw('tiny', { prompt: 'one day' }, { maxTokens: 12 }));
    expect(again.text).toBe(first.text);
    const stop = first.text.trim().split(/\s+/)[2]!;
    const stopped = await engine.run(plain, raw('tiny', { prompt: 'one day' }, { maxTokens: 12, stop: [stop] }));
    expect(stopped).toMatchObject({ finishReason: 'stop', stopSequence: stop });
    // node-llama-cpp drops the space of the token the stop text starts in; llama-server keeps it.
    expect(stopped.text.trimEnd()).toBe(first.text.slice(0, first.text.indexOf(stop)).trimEnd());
  });

  it('ends a cancelled generation with what it made so far', async () => {
    const controller = new AbortController();
    const request = raw('tiny', { prompt: 'the' }, { maxTokens: 200, signal: controller.signal, onText: () => controller.abort() });
    const result = await engine.run(plain, request);
    expect(result.finishReason).toBe('cancelled');
    expect(result.completionTokens).toBeLessThan(200);
  });

  it('fills in the middle with the model’s FIM tokens', async () => {
    const request = raw('tiny-fim', { prompt: 'def add(a, b):\n    return', suffix: '\n\nprint(add(1, 2))\n' });
    const pieces: string[] = [];
    const result = await engine.run(fim, { ...request, onText: (delta) => pieces.push(delta) });
    expect(result.text.length).toBeGreaterThan(0);
    expect(pieces.join('')).toBe(result.text);
    expect(result.promptTokens).toBe(await engine.countTokens(fim, request));
    // The extra files are rendered in front of the prefix.
    const withFiles = raw('tiny-fim', { prompt: 'x = ', suffix: '', extra: [{ name: 'lib.py', text: 'def helper():\n    pass\n' }] });
    expect(await engine.countTokens(fim, withFiles)).toBeGreaterThan(await engine.countTokens(fim, raw('tiny-fim', { prompt: 'x = ', suffix: '' })));
    expect((await engine.run(fim, withFiles)).completionTokens).toBeGreaterThan(0);
    // Counted without a budget, the files are counted whole (no context to leave room in).
    const unbounded = { ...withFiles, maxTokens: undefined };
    expect(await engine.countTokens(fim, unbounded)).toBe(await engine.countTokens(fim, withFiles));
  });

  it('refuses a suffix on a model without FIM tokens, naming the field', async () => {
    const error = await engine.run(plain, raw('tiny', { prompt: 'a', suffix: 'b' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HearthError);
    expect(error).toMatchObject({ code: 'invalid_request_error', status: 400, param: 'suffix' });
    expect((error as Error).message).toMatch(/has no fill-in-the-middle tokens.*code model/);
  });

  it('refuses a prompt longer than the context instead of cutting it', async () => {
    const error = await engine.run(plain, raw('tiny', { prompt: 'the water '.repeat(700) })).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'prompt' });
  });
});

describe('counting tokens', () => {
  it('counts a model that is not loaded from its vocabulary, without loading it, as the loaded model does', async () => {
    const fresh = new Engine(engineOptions());
    try {
      const chat = generationRequest('tiny', { text: 'How many tokens is this?' });
      const tools = generationRequest('tiny', {
        text: 'How many tokens is this?',
        tools: [{ name: 'clock', description: 'The time' }],
        toolMode: { type: 'auto' },
      });
      const counts = [
        await fresh.countTokens(plain, chat),
        await fresh.countTokens(plain, tools),
        await fresh.countTokens(fim, raw('tiny-fim', { prompt: 'a', suffix: 'b' })),
      ];
      expect(fresh.status()).toEqual([]);
      // The tools' description is part of the prompt.
      expect(counts[1]).toBeGreaterThan(counts[0]!);
      expect(counts).toEqual([
        await engine.countTokens(plain, chat),
        await engine.countTokens(plain, tools),
        await engine.countTokens(fim, raw('tiny-fim', { prompt: 'a', suffix: 'b' })),
      ]);
      expect((await engine.run(plain, chat)).promptTokens).toBe(counts[0]);
    } finally {
      await fresh.close();
    }
  });
});

describe('rendering', () => {
  it('puts BOS, FIM prefix, prompt, FIM suffix, suffix, FIM middle in llama.cpp’s order', async () => {
    const llama = await getLlama({ gpu: false });
    const model = await llama.loadModel({ modelPath: fim.path, vocabOnly: true });
    try {
      const { prefix, suffix, middle } = model.tokens.infill;
      expect([prefix, suffix, middle]).not.toContain(null);
      const tokens = planRaw(model, 1024, raw('tiny-fim', { prompt: 'the', suffix: 'was' })).promptTokens;
      expect(tokens).toEqual([model.tokens.bos, prefix, ...model.tokenize('the'), suffix, ...model.tokenize('was'), middle]);
      // A plain prompt parses special tokens, as /completion does.
      const special = planRaw(model, 1024, raw('tiny-fim', { prompt: '<|fim_prefix|>the' })).promptTokens;
      expect(special).toEqual([model.tokens.bos, prefix, ...model.tokenize('the')]);
    } finally {
      await model.dispose();
    }
  });
});
