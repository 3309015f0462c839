/**
 * A model with a projector on the llama-server engine: the process is started with the projector
 * (kept on the CPU with the model), GET /admin/status's model entry names it, and its weights
 * count in the memory budget. Needs the llama-server build.
 */
import { statSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../companion/src/inference/engine.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import sharp from 'sharp';
import { HearthError } from '../../../companion/src/errors.js';
import type { HistoryItem, MediaPart } from '../../../companion/src/inference/types.js';
import { projectorImageTokens } from '../../../scripts/gguf/write-projector.js';
import { engineMaker, engineOptions, promptCounters, serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyVisionModelPaths } from '../../helpers/models.js';

let vision: ModelFile;
let plain: ModelFile;

beforeAll(async () => {
  const { model, projector } = await tinyVisionModelPaths();
  plain = { id: 'tiny', path: model, sizeBytes: statSync(model).size, capabilities: ['chat', 'tools'] };
  vision = { ...plain, id: 'tiny-vision', capabilities: ['chat', 'tools', 'vision'], projector: { path: projector, sizeBytes: statSync(projector).size } };
});

const makeEngine = engineMaker();
const engine = (inProcess = false): Engine => makeEngine(inProcess ? engineOptions({ engine: 'in-process' }) : serverEngineOptions());

describe('a model with a projector on the llama-server engine', () => {
  it('starts with the projector, names it in its status, and counts its weights', async () => {
    const subject = engine();
    await subject.run(vision, generationRequest('tiny-vision'));
    await subject.run(plain, generationRequest('tiny'));
    const status = new Map(subject.status().map((entry) => [entry.id, entry]));
    expect(status.get('tiny-vision')).toMatchObject({ engine: 'server', projector: vision.projector!.path });
    expect(status.get('tiny')?.projector).toBeUndefined();
    const server = subject.loadedModel('tiny-vision') as ServerModel;
    const props = await server.serverProcess.client.json<{ modalities?: { vision?: boolean } }>('GET', '/props');
    expect(props.modalities?.vision).toBe(true);
    const text = subject.loadedModel('tiny') as ServerModel;
    expect((await text.serverProcess.client.json<{ modalities?: { vision?: boolean } }>('GET', '/props')).modalities?.vision).toBe(false);
    // The projector's file is part of what the model takes from the budget.
    expect(server.bytes - text.bytes).toBeGreaterThanOrEqual(vision.projector!.sizeBytes);
  });
});

async function image(red: number): Promise<MediaPart> {
  const data = await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: red, g: 40, b: 90 } } })
    .png()
    .toBuffer();
  return { kind: 'image', data, mime: 'image/png', offset: 0 };
}

const counters = (subject: Engine) => promptCounters(subject, 'tiny-vision');

describe('images in a conversation on the llama-server engine', () => {
  it('an image costs its tokens, two images twice that, and the next turn reuses them from the cache', async () => {
    const subject = engine();
    const ask = (history: HistoryItem[]) => subject.run(vision, generationRequest('tiny-vision', { history, maxTokens: 3, sampling: { seed: 3 } }));
    const question = 'What is in this picture?';
    const plain = await ask([{ role: 'user', text: question }]);
    const at = question.length;
    const one = await ask([{ role: 'user', text: question, media: [{ ...(await image(200)), offset: at }] }]);
    expect(one.promptTokens).toBeGreaterThanOrEqual(plain.promptTokens + projectorImageTokens);
    expect(one.completionTokens).toBeGreaterThan(0);
    const two = await ask([
      {
        role: 'user',
        text: question,
        media: [
          { ...(await image(10)), offset: at },
          { ...(await image(250)), offset: at },
        ],
      },
    ]);
    expect(two.promptTokens).toBe(one.promptTokens + projectorImageTokens);

    // The next turn of the two-image conversation: only its new text is evaluated.
    const history: HistoryItem[] = [
      {
        role: 'user',
        text: question,
        media: [
          { ...(await image(10)), offset: at },
          { ...(await image(250)), offset: at },
        ],
      },
      { role: 'assistant', text: 'A picture.', toolCalls: [] },
      { role: 'user', text: 'And the colour?' },
    ];
    const before = counters(subject);
    const next = await ask(history);
    const after = counters(subject);
    expect(after.reused - before.reused).toBeGreaterThanOrEqual(two.promptTokens - 1);
    expect(after.evaluated - before.evaluated).toBeLessThan(next.promptTokens - two.promptTokens + 12);
  });

  it('refuses media for a model without a projector, and on the in-process engine says why', async () => {
    const media = [await image(100)];
    const request = generationRequest('tiny', { history: [{ role: 'user', text: 'See', media }] });
    const noProjector = await engine()
      .run(plain, request)
      .catch((error: unknown) => error);
    expect(noProjector).toBeInstanceOf(HearthError);
    expect((noProjector as HearthError).message).toMatch(/tiny cannot take images: it has no multimodal projector/);
    const inProcess = await engine(true)
      .run(vision, generationRequest('tiny-vision', { history: [{ role: 'user', text: 'See', media }] }))
      .catch((error: unknown) => error);
    expect((inProcess as HearthError).status).toBe(400);
    expect((inProcess as HearthError).message).toMatch(
      /only on the llama-server engine .* the in-process engine runs it now: The engine setting asks for the in-process engine\./,
    );
  });
});
