/**
 * A model with a projector on the llama-server engine: the process is started with the projector
 * (kept on the CPU with the model), GET /admin/status's model entry names it, and its weights
 * count in the memory budget. Needs the llama-server build.
 */
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../companion/src/inference/engine.js';
import type { ServerModel } from '../../../companion/src/inference/server/model.js';
import type { ModelFile } from '../../../companion/src/inference/types.js';
import { serverEngineOptions } from '../../helpers/engine.js';
import { generationRequest, tinyVisionModelPaths } from '../../helpers/models.js';

let vision: ModelFile;
let plain: ModelFile;
const engines: Engine[] = [];

beforeAll(async () => {
  const { model, projector } = await tinyVisionModelPaths();
  plain = { id: 'tiny', path: model, sizeBytes: statSync(model).size, capabilities: ['chat', 'tools'] };
  vision = { ...plain, id: 'tiny-vision', capabilities: ['chat', 'tools', 'vision'], projector: { path: projector, sizeBytes: statSync(projector).size } };
});

afterAll(async () => {
  for (const engine of engines) await engine.close();
});

function engine(): Engine {
  const created = new Engine(serverEngineOptions());
  engines.push(created);
  return created;
}

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
