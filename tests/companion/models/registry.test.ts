import { copyFile, mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanModels, type LocalModel, type ScanOptions } from '../../../companion/src/models/registry.js';
import { chatMetadata, embeddingMetadata, writeGgufHeader } from '../../helpers/gguf-header.js';
import { tinyModelPath } from '../../helpers/models.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-registry-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let counter = 0;
async function freshHome(): Promise<{ home: string; models: string }> {
  const base = join(root, `case-${++counter}`);
  const home = join(base, 'home');
  const models = join(base, 'hearth', 'models');
  await mkdir(home, { recursive: true });
  await mkdir(models, { recursive: true });
  return { home, models };
}

function byId(models: LocalModel[]): Map<string, LocalModel> {
  return new Map(models.map((model) => [model.id, model]));
}

const digestA = 'a'.repeat(64);
const digestB = 'b'.repeat(64);
const digestP = 'c'.repeat(64);

async function ollamaManifest(
  modelsRoot: string,
  namespace: string,
  name: string,
  tag: string,
  digest: string,
  registry = 'registry.ollama.ai',
): Promise<void> {
  const file = join(modelsRoot, 'manifests', registry, namespace, name, tag);
  await mkdir(join(file, '..'), { recursive: true });
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: `sha256:${'0'.repeat(64)}`, size: 10 },
    layers: [
      { mediaType: 'application/vnd.ollama.image.projector', digest: `sha256:${digestP}`, size: 100 },
      { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: 1000 },
      { mediaType: 'application/vnd.ollama.image.template', digest: `sha256:${'1'.repeat(64)}`, size: 10 },
    ],
  };
  await writeFile(file, JSON.stringify(manifest));
}

/** A home folder laid out the way LM Studio, Ollama, the HF hub and llama.cpp leave it. */
async function populateExternal(home: string): Promise<void> {
  // LM Studio: ~/.lmstudio/models/<publisher>/<repo>/*.gguf, projector beside the model.
  const lmRepo = join(home, '.lmstudio', 'models', 'lmstudio-community', 'Qwen2.5-0.5B-Instruct-GGUF');
  await writeGgufHeader(join(lmRepo, 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf'), chatMetadata(32768), { sizeBytes: 5000 });
  await writeGgufHeader(join(lmRepo, 'mmproj-Qwen2.5-F16.gguf'), { 'general.architecture': 'clip' });
  await writeGgufHeader(join(lmRepo, 'Qwen2.5-0.5B-Instruct-Q8_0.gguf'), chatMetadata(32768), { sizeBytes: 6000 });
  // Older LM Studio folder.
  await writeGgufHeader(join(home, '.cache', 'lm-studio', 'models', 'TheBloke', 'Old-GGUF', 'old-model.Q4_0.gguf'), chatMetadata(2048));

  // Ollama: manifests + content-addressed blobs; two tags share one blob.
  const ollama = join(home, '.ollama', 'models');
  await writeGgufHeader(join(ollama, 'blobs', `sha256-${digestA}`), chatMetadata(131072), { sizeBytes: 7000 });
  await writeGgufHeader(join(ollama, 'blobs', `sha256-${digestB}`), embeddingMetadata('nomic-bert', 8192));
  await writeGgufHeader(join(ollama, 'blobs', `sha256-${digestP}`), { 'general.architecture': 'clip' });
  await ollamaManifest(ollama, 'library', 'llama3.2', '3b', digestA);
  await ollamaManifest(ollama, 'library', 'llama3.2', 'latest', digestA);
  await ollamaManifest(ollama, 'library', 'nomic-embed-text', 'latest', digestB);
  await ollamaManifest(ollama, 'someuser', 'mymodel', 'v1', digestA);

  // Hugging Face hub cache: snapshot files are symlinks into blobs; refs/main names the snapshot.
  const repo = join(home, '.cache', 'huggingface', 'hub', 'models--bartowski--Phi-3-mini-GGUF');
  await writeGgufHeader(join(repo, 'blobs', 'f00d'), chatMetadata(4096), { sizeBytes: 8000 });
  await writeGgufHeader(join(repo, 'blobs', 'dead'), chatMetadata(4096), { sizeBytes: 100 });
  await mkdir(join(repo, 'snapshots', 'rev1'), { recursive: true });
  await mkdir(join(repo, 'snapshots', 'rev0'), { recursive: true });
  await symlink('../../blobs/f00d', join(repo, 'snapshots', 'rev1', 'Phi-3-mini-Q4_K_M.gguf'));
  await symlink('../../blobs/dead', join(repo, 'snapshots', 'rev0', 'Phi-3-mini-OLD.gguf'));
  await mkdir(join(repo, 'refs'), { recursive: true });
  await writeFile(join(repo, 'refs', 'main'), 'rev1');

  // llama.cpp cache: flat <org>_<repo>_<file>.gguf.
  await writeGgufHeader(
    join(home, '.cache', 'llama.cpp', 'ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf'),
    { 'general.architecture': 'gemma3', 'gemma3.context_length': 32768, 'tokenizer.chat_template': 'x' },
    { sizeBytes: 9000 },
  );
}

function options(home: string, models: string, extra: Partial<ScanOptions> = {}): ScanOptions {
  return { modelsDirs: [models], externalSources: true, home, env: {}, platform: 'linux', ...extra };
}

describe('scanModels: models folder', () => {
  it('lists a real GGUF with its metadata', async () => {
    const { home, models } = await freshHome();
    await copyFile(await tinyModelPath(), join(models, 'Tiny Model.gguf'));
    const size = (await stat(join(models, 'Tiny Model.gguf'))).size;
    const list = await scanModels(options(home, models, { externalSources: false }));
    expect(list).toEqual([
      {
        id: 'tiny-model',
        path: join(models, 'Tiny Model.gguf'),
        source: 'models-dir',
        sizeBytes: size,
        contextLength: 2048,
        architecture: 'llama',
        capabilities: ['chat', 'completion', 'tools'],
      },
    ]);
  });

  it('folds split models, skips projectors, marks embeddings, lists unreadable files with the reason', async () => {
    const { home, models } = await freshHome();
    await writeGgufHeader(join(models, 'big', 'Big-Model-Q8_0-00001-of-00003.gguf'), chatMetadata(65536), { sizeBytes: 1000 });
    await writeFile(join(models, 'big', 'Big-Model-Q8_0-00002-of-00003.gguf'), Buffer.alloc(2000));
    await writeFile(join(models, 'big', 'Big-Model-Q8_0-00003-of-00003.gguf'), Buffer.alloc(3000));
    await writeGgufHeader(join(models, 'half-00001-of-00002.gguf'), chatMetadata(), { sizeBytes: 500 });
    await writeGgufHeader(join(models, 'mmproj-model-f16.gguf'), { 'general.architecture': 'clip' });
    await writeGgufHeader(join(models, 'nested', 'deeper', 'nomic-embed-text-v1.5.Q8_0.gguf'), embeddingMetadata('nomic-bert', 2048));
    await writeGgufHeader(join(models, 'Qwen3-Embed.gguf'), {
      'general.architecture': 'qwen3',
      'qwen3.context_length': 32768,
      'qwen3.pooling_type': 3,
    });
    await writeGgufHeader(join(models, 'lora.gguf'), { 'general.architecture': 'llama', 'general.type': 'adapter' });
    await writeFile(join(models, 'broken.gguf'), 'this is not a gguf file');
    await writeFile(join(models, 'empty.gguf'), '');
    await writeFile(join(models, 'notes.txt'), 'ignored');
    await writeFile(join(models, 'download.gguf.partial'), 'ignored');

    const list = await scanModels(options(home, models));
    expect(list.map((model) => model.id)).toEqual(['big-model-q8_0', 'broken', 'empty', 'half', 'nomic-embed-text-v1.5.q8_0', 'qwen3-embed']);
    const models_ = byId(list);
    expect(models_.get('big-model-q8_0')).toMatchObject({
      path: join(models, 'big', 'Big-Model-Q8_0-00001-of-00003.gguf'),
      sizeBytes: 6000,
      contextLength: 65536,
      capabilities: ['chat', 'completion', 'tools'],
    });
    expect(models_.get('big-model-q8_0')!.error).toBeUndefined();
    expect(models_.get('half')).toMatchObject({ capabilities: [], error: expect.stringContaining('1 of 2 parts') });
    expect(models_.get('nomic-embed-text-v1.5.q8_0')).toMatchObject({ architecture: 'nomic-bert', capabilities: ['embedding'] });
    expect(models_.get('qwen3-embed')).toMatchObject({ capabilities: ['embedding'] });
    const broken = models_.get('broken')!;
    expect(broken).toMatchObject({ source: 'models-dir', capabilities: [], contextLength: null, architecture: null });
    expect(broken.error).toMatch(/cannot read GGUF metadata/);
    expect(models_.get('empty')).toMatchObject({ capabilities: [], error: 'the file is empty' });
  });

  it('prefixes colliding stems with their folder, deterministically', async () => {
    const { home, models } = await freshHome();
    const second = join(root, `case-${counter}`, 'more-models');
    await writeGgufHeader(join(models, 'a', 'Shared.gguf'), chatMetadata(1024));
    await writeGgufHeader(join(models, 'b', 'shared.gguf'), chatMetadata(2048));
    await writeGgufHeader(join(second, 'a', 'shared.gguf'), chatMetadata(4096));
    await writeGgufHeader(join(models, 'unique name!.gguf'), chatMetadata());
    const scan = () => scanModels(options(home, models, { modelsDirs: [models, second], externalSources: false }));
    const list = await scan();
    expect(list.map((model) => [model.id, model.contextLength])).toEqual([
      ['a.shared', 1024],
      ['a.shared-2', 4096],
      ['b.shared', 2048],
      ['unique-name', 4096],
    ]);
    expect(await scan()).toEqual(list);
  });

  it('survives symlink loops and missing folders', async () => {
    const { home, models } = await freshHome();
    await writeGgufHeader(join(models, 'one.gguf'), chatMetadata());
    await symlink(models, join(models, 'loop'));
    await symlink(join(models, 'one.gguf'), join(models, 'alias.gguf'));
    const list = await scanModels(options(home, models, { modelsDirs: [models, join(home, 'missing')] }));
    expect(list.map((model) => model.id)).toEqual(['one']);
  });
});

describe('scanModels: other apps', () => {
  it('reads LM Studio, Ollama, the Hugging Face cache and llama.cpp without touching them', async () => {
    const { home, models } = await freshHome();
    await populateExternal(home);
    const list = await scanModels(options(home, models));
    const ids = list.map((model) => model.id);
    expect(ids).toEqual([...ids].sort());
    for (const id of ids) expect(id).toMatch(/^[a-z0-9._:-]+$/);
    expect(list.map((model) => [model.id, model.source])).toEqual([
      ['ggml-org_gemma-3-1b-it-gguf_gemma-3-1b-it-q4_k_m', 'llama.cpp'],
      ['llama3.2:3b', 'ollama'],
      ['llama3.2:latest', 'ollama'],
      ['nomic-embed-text:latest', 'ollama'],
      ['old-model.q4_0', 'lmstudio'],
      ['phi-3-mini-q4_k_m', 'huggingface'],
      ['qwen2.5-0.5b-instruct-q4_k_m', 'lmstudio'],
      ['qwen2.5-0.5b-instruct-q8_0', 'lmstudio'],
      ['someuser.mymodel:v1', 'ollama'],
    ]);
    const found = byId(list);
    const ollamaBlob = join(home, '.ollama', 'models', 'blobs', `sha256-${digestA}`);
    expect(found.get('llama3.2:3b')).toMatchObject({ path: ollamaBlob, sizeBytes: 7000, contextLength: 131072 });
    expect(found.get('llama3.2:latest')!.path).toBe(ollamaBlob);
    expect(found.get('nomic-embed-text:latest')!.capabilities).toEqual(['embedding']);
    const phi = found.get('phi-3-mini-q4_k_m')!;
    expect(phi.path).toBe(join(home, '.cache', 'huggingface', 'hub', 'models--bartowski--Phi-3-mini-GGUF', 'snapshots', 'rev1', 'Phi-3-mini-Q4_K_M.gguf'));
    expect(phi.sizeBytes).toBe(8000);
    expect(found.get('qwen2.5-0.5b-instruct-q4_k_m')).toMatchObject({ sizeBytes: 5000, contextLength: 32768 });
    expect(found.get('ggml-org_gemma-3-1b-it-gguf_gemma-3-1b-it-q4_k_m')).toMatchObject({
      architecture: 'gemma3',
      contextLength: 32768,
      sizeBytes: 9000,
    });
    // The projector layer and the mmproj file are not models; the stale snapshot is not read.
    expect(ids.filter((id) => id.includes('mmproj') || id.includes('clip') || id.includes('phi-3-mini-old'))).toEqual([]);
  });

  it('ignores other apps when externalSources is false', async () => {
    const { home, models } = await freshHome();
    await populateExternal(home);
    await writeGgufHeader(join(models, 'mine.gguf'), chatMetadata());
    const list = await scanModels(options(home, models, { externalSources: false }));
    expect(list.map((model) => model.id)).toEqual(['mine']);
  });

  it('gives models-dir the bare id and prefixes other apps with their source on collision', async () => {
    const { home, models } = await freshHome();
    await populateExternal(home);
    await writeGgufHeader(join(models, 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf'), chatMetadata(1024));
    // the same stem in two other apps: both take their source prefix
    await writeGgufHeader(join(home, '.cache', 'llama.cpp', 'Phi-3-mini-Q4_K_M.gguf'), chatMetadata(512));
    const found = byId(await scanModels(options(home, models)));
    expect(found.get('qwen2.5-0.5b-instruct-q4_k_m')).toMatchObject({ source: 'models-dir', contextLength: 1024 });
    expect(found.get('lmstudio.qwen2.5-0.5b-instruct-q4_k_m')).toMatchObject({ source: 'lmstudio', contextLength: 32768 });
    expect(found.get('huggingface.phi-3-mini-q4_k_m')).toMatchObject({ source: 'huggingface' });
    expect(found.get('llama.cpp.phi-3-mini-q4_k_m')).toMatchObject({ source: 'llama.cpp', contextLength: 512 });
    expect(found.has('phi-3-mini-q4_k_m')).toBe(false);
  });

  it('follows OLLAMA_MODELS, HF_HUB_CACHE, HF_HOME and LLAMA_CACHE', async () => {
    const { home, models } = await freshHome();
    const elsewhere = join(root, `case-${counter}`, 'elsewhere');
    await ollamaManifest(join(elsewhere, 'ollama'), 'library', 'qwen3', '0.6b', digestA);
    await writeGgufHeader(join(elsewhere, 'ollama', 'blobs', `sha256-${digestA}`), chatMetadata(40960));
    await ollamaManifest(join(elsewhere, 'ollama'), 'bartowski', 'model', 'q4', digestB, 'hf.co');
    await writeGgufHeader(join(elsewhere, 'ollama', 'blobs', `sha256-${digestB}`), chatMetadata());
    const hfRepo = join(elsewhere, 'hf-home', 'hub', 'models--org--Repo');
    await writeGgufHeader(join(hfRepo, 'snapshots', 'abc', 'sub', 'Repo-Q4_K_M.gguf'), chatMetadata());
    await writeGgufHeader(join(elsewhere, 'llama-cache', 'cached.gguf'), chatMetadata());
    const env = {
      OLLAMA_MODELS: join(elsewhere, 'ollama'),
      HF_HOME: join(elsewhere, 'hf-home'),
      LLAMA_CACHE: join(elsewhere, 'llama-cache'),
    };
    const list = await scanModels(options(home, models, { env }));
    expect(list.map((model) => [model.id, model.source])).toEqual([
      ['cached', 'llama.cpp'],
      ['hf.co.bartowski.model:q4', 'ollama'],
      ['qwen3:0.6b', 'ollama'],
      ['repo-q4_k_m', 'huggingface'],
    ]);
    const hubOnly = await scanModels(options(home, models, { env: { HF_HUB_CACHE: join(elsewhere, 'hf-home', 'hub') } }));
    expect(hubOnly.map((model) => model.id)).toEqual(['repo-q4_k_m']);
  });

  it('uses the newest snapshot when refs/main is absent, and lists a manifest whose blob is missing', async () => {
    const { home, models } = await freshHome();
    const repo = join(home, '.cache', 'huggingface', 'hub', 'models--org--repo');
    await writeGgufHeader(join(repo, 'snapshots', 'old', 'model-old.gguf'), chatMetadata());
    await writeGgufHeader(join(repo, 'snapshots', 'new', 'model-new.gguf'), chatMetadata());
    await utimes(join(repo, 'snapshots', 'old'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    await utimes(join(repo, 'snapshots', 'new'), new Date(2024, 0, 1), new Date(2024, 0, 1));
    await ollamaManifest(join(home, '.ollama', 'models'), 'library', 'gone', 'latest', digestA);
    const found = byId(await scanModels(options(home, models)));
    expect([...found.keys()]).toEqual(['gone:latest', 'model-new']);
    expect(found.get('gone:latest')).toMatchObject({ capabilities: [], error: expect.stringContaining('missing') });
  });

  it('chooses macOS and Windows cache folders by platform, and follows the LM Studio home pointer', async () => {
    const { home, models } = await freshHome();
    await writeGgufHeader(join(home, 'Library', 'Caches', 'llama.cpp', 'mac.gguf'), chatMetadata());
    await writeGgufHeader(join(home, 'AppData', 'Local', 'llama.cpp', 'win.gguf'), chatMetadata());
    await writeGgufHeader(join(home, '.cache', 'llama.cpp', 'linux.gguf'), chatMetadata());
    const moved = join(root, `case-${counter}`, 'lmstudio-data');
    await writeGgufHeader(join(moved, 'models', 'pub', 'repo', 'moved.gguf'), chatMetadata());
    await writeFile(join(home, '.lmstudio-home-pointer'), `${moved}\n`);
    const ids = async (platform: NodeJS.Platform) => (await scanModels(options(home, models, { platform }))).map((model) => model.id);
    expect(await ids('darwin')).toEqual(['mac', 'moved']);
    expect(await ids('win32')).toEqual(['moved', 'win']);
    expect(await ids('linux')).toEqual(['linux', 'moved']);
  });
});

describe('scanModels: metadata cache', () => {
  it('reuses metadata while (path, size, mtime) are unchanged and rereads when they change', async () => {
    const { home, models } = await freshHome();
    const file = join(models, 'cached.gguf');
    await writeGgufHeader(file, chatMetadata(1234), { sizeBytes: 4096 });
    const when = new Date(2024, 5, 1);
    await utimes(file, when, when);
    expect((await scanModels(options(home, models)))[0]).toMatchObject({ contextLength: 1234 });

    // Same size and mtime, different bytes: the cached header is used.
    await writeFile(file, Buffer.alloc(4096));
    await utimes(file, when, when);
    expect((await scanModels(options(home, models)))[0]).toMatchObject({ contextLength: 1234 });

    // A new mtime: reread, and now unreadable.
    await utimes(file, new Date(2024, 5, 2), new Date(2024, 5, 2));
    const [model] = await scanModels(options(home, models));
    expect(model).toMatchObject({ contextLength: null, capabilities: [] });
    expect(model!.error).toBeDefined();
  });
});
