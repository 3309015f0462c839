/**
 * Speculative decoding on the llama-server engine with a generated pair: the target is the draft
 * plus blocks whose output projections are zero, so at temperature 0 the draft proposes exactly
 * what the target writes. A draft of another vocabulary is refused with the reason and the model
 * loads without it. Needs the llama-server build.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../companion/src/inference/engine.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { Metrics } from '../../../companion/src/metrics/metrics.js';
import { chooseDraft, draftIncompatibility } from '../../../companion/src/models/draft-vocabulary.js';
import { writeTinyModel } from '../../../scripts/gguf/write-model.js';
import { serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest } from '../../helpers/models.js';
import { parsePrometheus, sampleValue } from '../../helpers/prometheus.js';
import { tempFolder } from '../../helpers/temp.js';

const files: Record<string, string> = {};
let target: ModelFile;
const engines: Engine[] = [];

beforeAll(async () => {
  const folder = tempFolder('draft-models');
  for (const [id, options] of Object.entries({
    draft: { blocks: 2 },
    target: { blocks: 2, zeroExtraBlocks: 4 },
    thinking: { thinking: true },
  })) {
    files[id] = join(folder, `${id}.gguf`);
    await writeTinyModel(files[id], { size: 'tiny', seed: 3, ...options });
  }
  target = { id: 'target', path: files.target!, sizeBytes: statSync(files.target!).size, capabilities: ['chat'] };
});

afterAll(async () => {
  for (const engine of engines) await engine.close();
});

function engine(draft?: string): Engine {
  const created = new Engine(
    serverEngineOptions({
      ...(draft ? { overrides: { target: { draft } } } : {}),
      chooseDraft: (modelPath, id) => chooseDraft(modelPath, id, (name) => Promise.resolve(files[name])),
    }),
  );
  engines.push(created);
  return created;
}

const ask = () => generationRequest('target', { text: 'Tell me about the water', maxTokens: 48, sampling: { seed: 7, temperature: 0 } });

describe('a draft model', () => {
  it('of another vocabulary is refused with the reason, and the model loads without it', async () => {
    expect(await draftIncompatibility(files.target!, files.draft!)).toBeUndefined();
    expect(await draftIncompatibility(files.target!, files.thinking!)).toMatch(/vocabulary has \d+ tokens|token \d+ differs/);
    const subject = engine('thinking');
    const result = await subject.run(target, ask());
    expect(result.completionTokens).toBeGreaterThan(0);
    const draft = subject.status().find((entry) => entry.id === 'target')?.draft;
    expect(draft).toEqual({ off: expect.stringMatching(/^draft thinking does not share the model's vocabulary: /) as unknown });
  });

  it('names a model Hearth does not list: the reason says so', async () => {
    const subject = engine('missing');
    await subject.run(target, ask());
    expect(subject.status().find((entry) => entry.id === 'target')?.draft).toEqual({ off: 'draft missing is not a local model Hearth lists' });
  });

  it('proposes tokens the model accepts, and leaves the output at temperature 0 as it is without it', async () => {
    const plain = await engine().run(target, ask());
    expect(engines.at(-1)!.status()[0]?.draft).toBeUndefined();
    const subject = engine('draft');
    const drafted = await subject.run(target, ask());
    expect(drafted.text).toBe(plain.text);
    expect(drafted.completionTokens).toBe(plain.completionTokens);
    const draft = subject.status().find((entry) => entry.id === 'target')?.draft;
    expect(draft).toMatchObject({ model: 'draft' });
    if (!draft || !('model' in draft)) throw new Error('no draft in use');
    expect(draft.tokens).toBeGreaterThan(0);
    // The draft is the target's own network: every proposal it makes is what the target writes.
    expect(draft.accepted).toBe(draft.tokens);
    const metrics = new Metrics({
      engine: () => subject,
      pools: () => [],
      stored: () => ({ agentRuns: {}, imageJobs: {}, mediaJobs: {} }),
      localModels: () => ['target'],
      providerModel: () => undefined,
    });
    const scraped = parsePrometheus(await metrics.render());
    expect(sampleValue(scraped, 'hearth_draft_tokens_total', { model: 'target' })).toBe(draft.tokens);
    expect(sampleValue(scraped, 'hearth_draft_accepted_tokens_total', { model: 'target' })).toBe(draft.accepted);
  });
});
