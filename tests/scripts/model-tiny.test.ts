import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChatMLChatWrapper, getLlama, LlamaChatSession, readGgufFileInfo, resolveChatWrapper, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelBytes, writeTinyModel, type ModelSize } from '../../scripts/gguf/write-model.js';
import { tinyProjectorBytes } from '../../scripts/gguf/write-projector.js';
import { readGgufSummary } from '../../companion/src/models/gguf-metadata.js';
import { cleanEnv, REPO_ROOT, runNode } from '../helpers/hearth-process.js';
import { tinyEmbeddingModelPath, tinyModelPath } from '../helpers/models.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/model-tiny.ts', import.meta.url));
const TSX = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

// GGUF token_type value for byte-fallback tokens such as <0x0A>.
const byteTokenType = 6;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'hearth-model-tiny-'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('writeTinyModel', () => {
  it('writes the same bytes for the same seed and different bytes for another seed', async () => {
    const first = await writeTinyModel(join(folder, 'first.gguf'), { seed: 7 });
    const second = await writeTinyModel(join(folder, 'second.gguf'), { seed: 7 });
    const other = await writeTinyModel(join(folder, 'other.gguf'), { seed: 8 });
    const firstBytes = await readFile(first.path);
    const secondBytes = await readFile(second.path);
    const otherBytes = await readFile(other.path);
    expect(firstBytes.equals(secondBytes)).toBe(true);
    expect(otherBytes.length).toBe(firstBytes.length);
    expect(otherBytes.equals(firstBytes)).toBe(false);
  });

  it('writes a tiny model of about half a megabyte and reports its size', async () => {
    const model = await writeTinyModel(join(folder, 'tiny.gguf'));
    const { size } = await stat(model.path);
    expect(model.bytes).toBe(size);
    expect(tinyModelBytes()).toBe(size);
    expect(size).toBeGreaterThan(300_000);
    expect(size).toBeLessThan(1_000_000);
  });

  it('plans a small model of about 90 MB without writing it', () => {
    const bytes = tinyModelBytes({ size: 'small' });
    expect(bytes).toBeGreaterThan(75_000_000);
    expect(bytes).toBeLessThan(100_000_000);
  });

  it('rejects an unknown size or a bad seed without creating a file', async () => {
    const path = join(folder, 'rejected.gguf');
    await expect(writeTinyModel(path, { size: 'huge' as ModelSize })).rejects.toThrow(/size/);
    await expect(writeTinyModel(path, { seed: -1 })).rejects.toThrow(/seed/i);
    await expect(writeTinyModel(path, { seed: 1.5 })).rejects.toThrow(/seed/i);
    await expect(stat(path)).rejects.toThrow();
  });
});

describe('npm run model:tiny', () => {
  it('writes into the data folder\'s models/ by default, named after its size, so it is the model "tiny"', async () => {
    const dataDir = join(folder, 'data-from-env');
    const fromEnv = await runNode(TSX, [SCRIPT], { env: cleanEnv({ HEARTH_DATA_DIR: dataDir }) });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toContain(join(dataDir, 'models', 'tiny.gguf'));
    expect((await stat(join(dataDir, 'models', 'tiny.gguf'))).size).toBe(tinyModelBytes());

    const flagged = join(folder, 'data-from-flag');
    const fromFlag = await runNode(TSX, [SCRIPT, '--data-dir', flagged, '--seed', '3'], { env: cleanEnv({ HEARTH_DATA_DIR: dataDir }) });
    expect(fromFlag.code, fromFlag.stderr).toBe(0);
    expect((await stat(join(flagged, 'models', 'tiny.gguf'))).size).toBe(tinyModelBytes());
  });

  it('writes to OUT when given one, and refuses two', async () => {
    const out = join(folder, 'explicit', 'mine.gguf');
    expect((await runNode(TSX, [SCRIPT, out])).code).toBe(0);
    expect((await stat(out)).size).toBe(tinyModelBytes());
    const two = await runNode(TSX, [SCRIPT, out, out]);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/at most one output path/);
  });

  it('--audio writes a sound projector beside the model, --vision --audio one with both, and neither goes with --embedding', async () => {
    const summary = async (path: string) => readGgufSummary(path, (await stat(path)).size, 0);
    const hearing = join(folder, 'hearing', 'ears.gguf');
    const audio = await runNode(TSX, [SCRIPT, hearing, '--audio']);
    expect(audio.code, audio.stderr).toBe(0);
    expect(audio.stdout).toMatch(/mmproj-ears\.gguf \d+ bytes \(audio projector for tiny\)/);
    const ears = join(folder, 'hearing', 'mmproj-ears.gguf');
    expect((await stat(ears)).size).toBe(tinyProjectorBytes({ vision: false, audio: true }));
    expect(await summary(ears)).toMatchObject({ kind: 'projector', embeddingLength: 64, modalities: { vision: false, audio: true } });

    const both = join(folder, 'both', 'senses.gguf');
    expect((await runNode(TSX, [SCRIPT, both, '--vision', '--audio'])).code).toBe(0);
    expect(await summary(join(folder, 'both', 'mmproj-senses.gguf'))).toMatchObject({ embeddingLength: 64, modalities: { vision: true, audio: true } });

    const refused = await runNode(TSX, [SCRIPT, join(folder, 'refused.gguf'), '--embedding', '--audio']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--embedding and --audio do not go together/);
  });

  it('--context sets the context the model says it was trained on, and refuses a nonsense length', async () => {
    const out = join(folder, 'long.gguf');
    expect((await runNode(TSX, [SCRIPT, out, '--context', '65536'])).code).toBe(0);
    const info = await readGgufFileInfo(out);
    expect(info.metadata.llama?.context_length).toBe(65536);
    const bad = await runNode(TSX, [SCRIPT, join(folder, 'bad.gguf'), '--context', '12']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--context must be a whole number/);
  });
});

describe('tiny model in node-llama-cpp', () => {
  it('has the llama metadata, byte tokens and chat template', async () => {
    const info = await readGgufFileInfo(await tinyModelPath());
    expect(info.version).toBe(3);
    expect(info.metadata.general.architecture).toBe('llama');
    expect(info.architectureMetadata).toMatchObject({ context_length: 2048, embedding_length: 64, block_count: 2 });
    const { tokenizer } = info.metadata;
    const { tokens, token_type: types, eos_token_id: eos, model } = tokenizer.ggml;
    expect(model).toBe('llama');
    expect(tokens[eos ?? -1]).toBe('<|im_end|>');
    expect(tokens).toContain('<|im_start|>');
    const byteTokens = tokens.filter((_, id) => types[id] === byteTokenType);
    expect(byteTokens).toHaveLength(256);
    expect(byteTokens[0]).toBe('<0x00>');
    expect(byteTokens[255]).toBe('<0xFF>');
    expect(tokenizer.chat_template).toContain('<|im_start|>assistant\\n');
  });

  it('loads, resolves the ChatML wrapper and chats in valid UTF-8', async () => {
    const llama = await getLlama({ gpu: false });
    const model = await llama.loadModel({ modelPath: await tinyModelPath() });
    try {
      expect(resolveChatWrapper(model)).toBeInstanceOf(ChatMLChatWrapper);
      const context = await model.createContext({ contextSize: 512, threads: 1 });
      const session = new LlamaChatSession({ contextSequence: context.getSequence() });
      expect(session.chatWrapper).toBeInstanceOf(ChatMLChatWrapper);
      const generated: Token[] = [];
      const text = await session.prompt('Hello, who are you?', {
        maxTokens: 32,
        temperature: 0.8,
        seed: 1,
        onToken: (tokens) => generated.push(...tokens),
      });
      expect(generated).toHaveLength(32);
      expect(generated.every((token) => model.getTokenAttributes(token).normal)).toBe(true);
      expect(text.trim().length).toBeGreaterThan(0);
      expect(text).not.toContain('\uFFFD');
      expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
    } finally {
      await model.dispose();
    }
  });

  it('counts what it wrote about as many tokens when the text comes back in a prompt', async () => {
    // A reply's usage says how many tokens were written; the next request tokenizes the same text
    // again. Those two counts must agree, or a conversation that fitted is refused as far too long.
    const llama = await getLlama({ gpu: false });
    const model = await llama.loadModel({ modelPath: await tinyModelPath() });
    try {
      const context = await model.createContext({ contextSize: 1024, threads: 1 });
      const session = new LlamaChatSession({ contextSequence: context.getSequence() });
      const generated: Token[] = [];
      const text = await session.prompt('Tell me a long story.', { maxTokens: 400, temperature: 0.8, seed: 3, onToken: (tokens) => generated.push(...tokens) });
      expect(generated).toHaveLength(400);
      const again = model.tokenize(text).length;
      expect(again).toBeGreaterThan(300);
      expect(again).toBeLessThanOrEqual(generated.length + 2);
    } finally {
      await model.dispose();
    }
  });
});

describe('tiny embedding model (--embedding)', () => {
  it('declares mean pooling and no chat template, so it is listed as an embedding model only', async () => {
    const path = await tinyEmbeddingModelPath();
    const info = await readGgufFileInfo(path);
    expect((info.architectureMetadata as { pooling_type?: number }).pooling_type).toBe(1);
    expect(info.metadata.tokenizer.chat_template).toBeUndefined();
    const { size, mtimeMs } = await stat(path);
    expect((await readGgufSummary(path, size, mtimeMs)).capabilities).toEqual(['embedding']);
    expect((await readGgufSummary(await tinyModelPath(), (await stat(await tinyModelPath())).size, 0)).capabilities).toEqual(['chat', 'completion', 'tools']);
  });

  it('gives one vector per text from node-llama-cpp’s embedding context: the same text alike, others apart', async () => {
    const llama = await getLlama({ gpu: false });
    const model = await llama.loadModel({ modelPath: await tinyEmbeddingModelPath() });
    try {
      const context = await model.createEmbeddingContext({ contextSize: 256, threads: 1 });
      const first = await context.getEmbeddingFor('hello world');
      const again = await context.getEmbeddingFor('hello world');
      const other = await context.getEmbeddingFor('the quick brown fox');
      expect(first.vector).toHaveLength(64);
      expect(first.calculateCosineSimilarity(again)).toBeCloseTo(1, 6);
      expect(first.calculateCosineSimilarity(other)).toBeLessThan(0.9);
    } finally {
      await model.dispose();
    }
  });
});
