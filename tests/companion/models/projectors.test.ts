/**
 * Models paired with their multimodal projectors: beside the model in a models folder, in the
 * Hugging Face cache and LM Studio layouts, Ollama's projector layer, and one named in the model's
 * overrides; a projector made for another embedding size is refused with the reason, and the
 * model is listed on text only. Real generated files (the tiny model and its tiny projector).
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { scanModels, type LocalModel, type ScanOptions } from '../../../companion/src/models/registry.js';
import { writeTinyProjector } from '../../../scripts/gguf/write-projector.js';
import { tinyModelPath, tinyVisionModelPaths } from '../../helpers/models.js';
import { tempFolder } from '../../helpers/temp.js';
import { asOwner, testApp } from '../../helpers/app.js';

let model: string;
let projector: string;
let wrong: string;

beforeAll(async () => {
  ({ model, projector } = await tinyVisionModelPaths());
  wrong = join(tempFolder('wrong-projector'), 'mmproj-other-model-f16.gguf');
  await writeTinyProjector(wrong, { embedding: 48 });
});

/** A folder laid out as given: name -> file to copy there. */
async function folder(files: Record<string, string>): Promise<string> {
  const root = tempFolder('projector-layout');
  for (const [name, from] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await copyFile(from, join(root, name));
  }
  return root;
}

async function scan(options: Partial<ScanOptions> & { modelsDirs: string[] }): Promise<Map<string, LocalModel>> {
  const models = await scanModels({ externalSources: false, home: tempFolder('home'), env: {}, ...options });
  return new Map(models.map((found) => [found.id, found]));
}

describe('pairing a model with its projector', () => {
  it('pairs the mmproj file beside a model, for every quantisation in the folder, and lists vision', async () => {
    const root = await folder({
      'gemma/gemma-Q4_K_M.gguf': model,
      'gemma/gemma-Q8_0.gguf': model,
      'gemma/mmproj-model-f16.gguf': projector,
      'plain.gguf': model,
    });
    const models = await scan({ modelsDirs: [root] });
    for (const id of ['gemma-q4_k_m', 'gemma-q8_0']) {
      const found = models.get(id)!;
      expect(found.capabilities).toContain('vision');
      expect(found.capabilities).not.toContain('audio');
      expect(found.projector).toMatchObject({ path: join(root, 'gemma', 'mmproj-model-f16.gguf'), vision: true, audio: false });
    }
    // A model in another folder does not take it; the projector is no model of its own.
    expect(models.get('plain')!.capabilities).not.toContain('vision');
    expect(models.get('plain')!.projector).toBeUndefined();
    expect([...models.keys()].some((id) => id.includes('mmproj'))).toBe(false);
  });

  it('prefers the projector whose name is the model’s, and skips one made for another model', async () => {
    const root = await folder({ 'a-mmproj.gguf': wrong, 'tiny-vision.gguf': model, 'mmproj-tiny-vision-f16.gguf': projector });
    const found = (await scan({ modelsDirs: [root] })).get('tiny-vision')!;
    expect(found.projector?.path).toBe(join(root, 'mmproj-tiny-vision-f16.gguf'));
    expect(found.projectorProblem).toBeUndefined();
  });

  it('refuses a projector of another embedding size with the reason, and lists the model on text only', async () => {
    const root = await folder({ 'tiny.gguf': model, 'mmproj-other-model-f16.gguf': wrong });
    const found = (await scan({ modelsDirs: [root] })).get('tiny')!;
    expect(found.projector).toBeUndefined();
    expect(found.capabilities).toEqual(['chat', 'completion', 'tools']);
    expect(found.error).toBeUndefined();
    expect(found.projectorProblem).toMatch(/mmproj-other-model-f16\.gguf makes embeddings 48 wide and the model takes 64/);
  });

  it('takes the projector named in the overrides (or none), and refuses one that is no projector or does not fit', async () => {
    const root = await folder({ 'tiny.gguf': model, 'beside/mmproj-x.gguf': projector });
    const elsewhere = await folder({ 'mmproj-tiny.gguf': projector });
    const named = (await scan({ modelsDirs: [root], projectors: { tiny: join(elsewhere, 'mmproj-tiny.gguf') } })).get('tiny')!;
    expect(named.projector?.path).toBe(join(elsewhere, 'mmproj-tiny.gguf'));
    expect(named.capabilities).toContain('vision');

    const pairedRoot = await folder({ 'tiny.gguf': model, 'mmproj-tiny.gguf': projector });
    const none = (await scan({ modelsDirs: [pairedRoot], projectors: { tiny: 'none' } })).get('tiny')!;
    expect(none.projector).toBeUndefined();
    expect(none.capabilities).not.toContain('vision');

    const mismatched = (await scan({ modelsDirs: [pairedRoot], projectors: { tiny: wrong } })).get('tiny')!;
    expect(mismatched.projector).toBeUndefined();
    expect(mismatched.projectorProblem).toMatch(/48 wide/);
    const notProjector = (await scan({ modelsDirs: [pairedRoot], projectors: { tiny: await tinyModelPath() } })).get('tiny')!;
    expect(notProjector.projectorProblem).toMatch(/is not a multimodal projector \(its architecture is llama\)/);
    const missing = (await scan({ modelsDirs: [pairedRoot], projectors: { tiny: join(root, 'nowhere.gguf') } })).get('tiny')!;
    expect(missing.projectorProblem).toMatch(/is not a file/);
  });

  it('pairs in the Hugging Face cache, LM Studio and Ollama layouts', async () => {
    const home = tempFolder('home');
    const snapshot = join(home, '.cache', 'huggingface', 'hub', 'models--org--Tiny-VL-GGUF', 'snapshots', 'abc');
    await mkdir(snapshot, { recursive: true });
    await copyFile(model, join(snapshot, 'Tiny-VL-Q4_K_M.gguf'));
    await copyFile(projector, join(snapshot, 'mmproj-Tiny-VL-f16.gguf'));
    const lmStudio = join(home, '.lmstudio', 'models', 'org', 'Tiny-VL-GGUF');
    await mkdir(lmStudio, { recursive: true });
    await copyFile(model, join(lmStudio, 'tiny-lm.gguf'));
    await copyFile(projector, join(lmStudio, 'mmproj-tiny-lm.gguf'));
    const ollama = join(home, '.ollama', 'models');
    const [modelDigest, projectorDigest] = ['d'.repeat(64), 'e'.repeat(64)];
    await mkdir(join(ollama, 'blobs'), { recursive: true });
    await copyFile(model, join(ollama, 'blobs', `sha256-${modelDigest}`));
    await copyFile(projector, join(ollama, 'blobs', `sha256-${projectorDigest}`));
    const manifest = join(ollama, 'manifests', 'registry.ollama.ai', 'library', 'tiny-vl', 'latest');
    await mkdir(join(manifest, '..'), { recursive: true });
    await writeFile(
      manifest,
      JSON.stringify({
        layers: [
          { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${modelDigest}` },
          { mediaType: 'application/vnd.ollama.image.projector', digest: `sha256:${projectorDigest}` },
        ],
      }),
    );
    const models = await scanModels({ modelsDirs: [], externalSources: true, home, env: {}, platform: 'linux' });
    const vision = models.filter((found) => found.capabilities.includes('vision')).map((found) => [found.id, found.source]);
    expect(vision).toEqual([
      ['tiny-lm', 'lmstudio'],
      ['tiny-vl-q4_k_m', 'huggingface'],
      ['tiny-vl:latest', 'ollama'],
    ]);
    expect(models.find((found) => found.source === 'ollama')?.projector?.path).toBe(join(ollama, 'blobs', `sha256-${projectorDigest}`));
  });
});

describe('GET /v1/models', () => {
  it('says vision in the capabilities of a model with a projector, and takes the projector set in its overrides', async () => {
    const { model: file } = await tinyVisionModelPaths();
    const app = await testApp({ withModel: false });
    try {
      await copyFile(file, join(app.services.paths.models, 'tiny.gguf'));
      await copyFile(file, join(app.services.paths.models, 'other.gguf'));
      const list = async () => {
        const response = await app.app.inject({ method: 'GET', url: '/v1/models' });
        return new Map(response.json<{ data: { id: string; capabilities?: string[] }[] }>().data.map((entry) => [entry.id, entry.capabilities ?? []]));
      };
      expect((await list()).get('tiny')).not.toContain('vision');
      const saved = await app.app.inject(
        asOwner({ method: 'POST', url: '/admin/config/apply', payload: { document: { version: 1, models: { overrides: { tiny: { projector } } } } } }),
      );
      expect(saved.statusCode, saved.body).toBe(200);
      expect((await list()).get('tiny')).toContain('vision');
      expect((await list()).get('other')).not.toContain('vision');
    } finally {
      await app.close();
    }
  });
});
