import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

export type ModelSize = 'tiny' | 'small';

export interface TinyModelOptions {
  size?: ModelSize;
  seed?: number;
  /**
   * An embedding model instead of a chat model: the same network with mean pooling declared
   * (`llama.pooling_type`) and no chat template. llama.cpp then pools the last hidden states into
   * one vector per input, and Hearth lists the model with the embedding capability only.
   */
  embedding?: boolean;
  /**
   * A chat format with a thought segment (Qwen3's shape): `<think>` and `</think>` join the
   * vocabulary as control tokens (never sampled), and the generation prompt opens the thought
   * (`enable_thinking: false` renders it closed and empty instead). The random weights never close
   * it, so a test ends the thought with a token budget.
   */
  thinking?: boolean;
  /**
   * Fill-in-the-middle tokens (Qwen2.5-Coder's names): `<|fim_prefix|>`, `<|fim_suffix|>` and
   * `<|fim_middle|>` join the vocabulary as control tokens (never sampled) and their ids the
   * metadata (`tokenizer.ggml.fim_pre_token_id` ...), so llama.cpp renders infill prompts with them.
   */
  fim?: boolean;
}

interface Shape {
  embedding: number;
  blocks: number;
  feedForward: number;
  heads: number;
  kvHeads: number;
}

export const modelSizes: readonly ModelSize[] = ['tiny', 'small'];
export const defaultSeed = 1;

const shapes: Record<ModelSize, Shape> = {
  tiny: { embedding: 64, blocks: 2, feedForward: 128, heads: 4, kvHeads: 2 },
  small: { embedding: 512, blocks: 8, feedForward: 1024, heads: 8, kvHeads: 8 },
};

const contextLength = 2048;
const alignment = 32;
const spacePrefix = '\u2581';

/*
 * Random weights give random logits, so byte and control tokens would be sampled and could
 * form invalid UTF-8. Their output rows are zero (logit exactly 0). Dimension 0 of the
 * residual stream is held at a constant positive "anchor" (set in every embedding row and
 * never written by a layer), and every ordinary token's output row has a large weight on it,
 * so ordinary logits sit far above 0 whatever the context.
 */
const anchorDimension = 0;
const anchor = 4;
const ordinaryBias = 8;

const tokenType = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

const chatTemplate =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Qwen3's template, reduced: an earlier turn's `reasoning_content` is dropped, the last assistant turn keeps it. */
const thinkingTemplate =
  '{%- for message in messages -%}' +
  "{%- if message.role == 'assistant' -%}{{- '<|im_start|>assistant\\n' -}}" +
  "{%- if loop.last and message.reasoning_content -%}{{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n\\n' -}}{%- endif -%}" +
  "{{- message.content + '<|im_end|>\\n' -}}" +
  "{%- else -%}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}{%- endif -%}" +
  '{%- endfor -%}' +
  "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}" +
  "{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\\n\\n</think>\\n\\n' -}}{%- else -%}{{- '<think>\\n' -}}{%- endif -%}" +
  '{%- endif -%}';

const words = `the of and to in is you that it he was for on are as with his they at be this have from
or one had by word but not what all were we when your can said there use an each which she do how
their if will up other about out many then them these so some her would make like him into time has
look two more write go see number no way could people my than first water been call who oil its now
find long down day did get come made may part over new sound take only little work know place year
live me back give most very after thing our just name good sentence man think say great where help
through much before line right too mean old any same tell boy follow came want show also around form
three small set put end does another well large must big even such because turn here why ask went
men read need land different home us move try kind hand picture again change off play spell air away
animal house point page letter mother answer found study still learn should world hello`.split(/\s+/);

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
  /** Tokens that exist only so the tokenizer can reach whole words: never sampled (zero output row). */
  quiet: Set<number>;
  unknown: number;
  begin: number;
  end: number;
  /** The fill-in-the-middle tokens' ids (option `fim`). */
  fim?: { prefix: number; suffix: number; middle: number };
}

function buildVocabulary(thinking: boolean, withFim = false): Vocabulary {
  const tokens: string[] = [];
  const types: number[] = [];
  const add = (text: string, type: number) => {
    tokens.push(text);
    types.push(type);
    return tokens.length - 1;
  };
  const unknown = add('<unk>', tokenType.unknown);
  const begin = add('<s>', tokenType.control);
  add('</s>', tokenType.control);
  add('<|im_start|>', tokenType.control);
  const end = add('<|im_end|>', tokenType.control);
  if (thinking) {
    add('<think>', tokenType.control);
    add('</think>', tokenType.control);
  }
  const fim = withFim
    ? { prefix: add('<|fim_prefix|>', tokenType.control), suffix: add('<|fim_suffix|>', tokenType.control), middle: add('<|fim_middle|>', tokenType.control) }
    : undefined;
  for (let byte = 0; byte < 256; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, tokenType.byte);
  }
  const ordinary = new Set<string>([spacePrefix]);
  for (let code = 0x21; code <= 0x7e; code++) {
    const character = String.fromCharCode(code);
    ordinary.add(character).add(spacePrefix + character);
  }
  for (const word of words) ordinary.add(spacePrefix + word);
  for (const text of ordinary) add(text, tokenType.normal);
  /*
   * llama.cpp's SentencePiece tokenizer builds a word by merging neighbouring pieces, and only
   * into pieces the vocabulary has: without "▁th", the text " the" stays three pieces. So every
   * word's prefixes are tokens too, or text the model wrote would count several times as many
   * tokens when it comes back in a prompt (a 1,997-token reply came back as 5,084).
   */
  const quiet = new Set<number>();
  for (const word of words) {
    for (let end = 3; end <= word.length; end++) {
      const prefix = spacePrefix + word.slice(0, end - 1);
      if (!ordinary.has(prefix) && !tokens.includes(prefix)) quiet.add(add(prefix, tokenType.normal));
    }
  }
  return { tokens, scores: tokens.map(() => 0), types, quiet, unknown, begin, end, ...(fim ? { fim } : {}) };
}

type MetadataValue = { string: string } | { uint32: number } | { float32: number } | { strings: string[] } | { float32s: number[] } | { int32s: number[] };

const ggufType = { uint32: 4, int32: 5, float32: 6, string: 8, array: 9 } as const;

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

function uint64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(BigInt(value));
  return buffer;
}

function int32s(values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeInt32LE(value, index * 4));
  return buffer;
}

function float32s(values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer;
}

function string(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([uint64(bytes.length), bytes]);
}

function array(type: number, count: number, body: Buffer[]): Buffer {
  return Buffer.concat([uint32(ggufType.array), uint32(type), uint64(count), ...body]);
}

function encodeValue(value: MetadataValue): Buffer {
  if ('string' in value) return Buffer.concat([uint32(ggufType.string), string(value.string)]);
  if ('uint32' in value) return Buffer.concat([uint32(ggufType.uint32), uint32(value.uint32)]);
  if ('float32' in value) return Buffer.concat([uint32(ggufType.float32), float32s([value.float32])]);
  if ('strings' in value) return array(ggufType.string, value.strings.length, value.strings.map(string));
  if ('float32s' in value) return array(ggufType.float32, value.float32s.length, [float32s(value.float32s)]);
  return array(ggufType.int32, value.int32s.length, [int32s(value.int32s)]);
}

/** llama.cpp's LLAMA_POOLING_TYPE_MEAN. */
const meanPooling = 1;

function metadata(size: ModelSize, shape: Shape, vocabulary: Vocabulary, options: TinyModelOptions): Record<string, MetadataValue> {
  const embedding = options.embedding ?? false;
  const kind: Record<string, MetadataValue> = embedding
    ? { 'llama.pooling_type': { uint32: meanPooling } }
    : { 'tokenizer.chat_template': { string: options.thinking ? thinkingTemplate : chatTemplate } };
  return {
    'general.architecture': { string: 'llama' },
    'general.name': { string: `Hearth ${size} test ${embedding ? 'embedding ' : ''}model` },
    'general.alignment': { uint32: alignment },
    'general.file_type': { uint32: 0 },
    'llama.context_length': { uint32: contextLength },
    'llama.embedding_length': { uint32: shape.embedding },
    'llama.block_count': { uint32: shape.blocks },
    'llama.feed_forward_length': { uint32: shape.feedForward },
    'llama.attention.head_count': { uint32: shape.heads },
    'llama.attention.head_count_kv': { uint32: shape.kvHeads },
    'llama.attention.layer_norm_rms_epsilon': { float32: 1e-5 },
    'llama.rope.dimension_count': { uint32: shape.embedding / shape.heads },
    'tokenizer.ggml.model': { string: 'llama' },
    'tokenizer.ggml.tokens': { strings: vocabulary.tokens },
    'tokenizer.ggml.scores': { float32s: vocabulary.scores },
    'tokenizer.ggml.token_type': { int32s: vocabulary.types },
    'tokenizer.ggml.bos_token_id': { uint32: vocabulary.begin },
    'tokenizer.ggml.eos_token_id': { uint32: vocabulary.end },
    'tokenizer.ggml.unknown_token_id': { uint32: vocabulary.unknown },
    'tokenizer.ggml.padding_token_id': { uint32: vocabulary.unknown },
    ...kind,
    ...fimIds(vocabulary),
  };
}

function fimIds(vocabulary: Vocabulary): Record<string, MetadataValue> {
  const fim = vocabulary.fim;
  if (!fim) return {};
  return {
    'tokenizer.ggml.fim_pre_token_id': { uint32: fim.prefix },
    'tokenizer.ggml.fim_suf_token_id': { uint32: fim.suffix },
    'tokenizer.ggml.fim_mid_token_id': { uint32: fim.middle },
  };
}

type Random = () => number;

/** mulberry32: uniform in [-1, 1), integer arithmetic only so every platform agrees. */
function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 31 - 1;
  };
}

interface Tensor {
  name: string;
  /** ggml order: dims[0] is the contiguous (input) dimension, dims[1] counts rows. */
  dims: [number] | [number, number];
  fill(values: Float32Array, random: Random): void;
}

const ones = (values: Float32Array) => values.fill(1);

function fillUniform(values: Float32Array, random: Random, scale: number) {
  for (let index = 0; index < values.length; index++) values[index] = random() * scale;
}

/** Variance 1/fan-in keeps activations near unit scale; `quietRow` (an output dimension) stays zero. */
function matrix(name: string, columns: number, rows: number, quietRow?: number): Tensor {
  return {
    name,
    dims: [columns, rows],
    fill: (values, random) => {
      fillUniform(values, random, Math.sqrt(3 / columns));
      if (quietRow !== undefined) values.fill(0, quietRow * columns, (quietRow + 1) * columns);
    },
  };
}

function tensors(shape: Shape, vocabulary: Vocabulary, pooled: boolean): Tensor[] {
  const { embedding, feedForward } = shape;
  const kvWidth = (embedding / shape.heads) * shape.kvHeads;
  const vocabularySize = vocabulary.tokens.length;
  const blocks = Array.from({ length: shape.blocks }, (_, block): Tensor[] => [
    { name: `blk.${block}.attn_norm.weight`, dims: [embedding], fill: ones },
    matrix(`blk.${block}.attn_q.weight`, embedding, embedding),
    matrix(`blk.${block}.attn_k.weight`, embedding, kvWidth),
    matrix(`blk.${block}.attn_v.weight`, embedding, kvWidth),
    matrix(`blk.${block}.attn_output.weight`, embedding, embedding, anchorDimension),
    { name: `blk.${block}.ffn_norm.weight`, dims: [embedding], fill: ones },
    matrix(`blk.${block}.ffn_gate.weight`, embedding, feedForward),
    matrix(`blk.${block}.ffn_up.weight`, embedding, feedForward),
    matrix(`blk.${block}.ffn_down.weight`, feedForward, embedding, anchorDimension),
  ]);
  return [
    {
      name: 'token_embd.weight',
      dims: [embedding, vocabularySize],
      fill: (values, random) => {
        fillUniform(values, random, 1);
        // An embedding model samples nothing, so it needs no anchor (which would make every vector alike).
        if (pooled) return;
        for (let token = 0; token < vocabularySize; token++) values[token * embedding + anchorDimension] = anchor;
      },
    },
    ...blocks.flat(),
    { name: 'output_norm.weight', dims: [embedding], fill: ones },
    {
      name: 'output.weight',
      dims: [embedding, vocabularySize],
      fill: (values, random) => {
        fillUniform(values, random, 3 / Math.sqrt(embedding));
        for (let token = 0; token < vocabularySize; token++) {
          const row = token * embedding;
          if (vocabulary.types[token] === tokenType.normal && !vocabulary.quiet.has(token)) values[row + anchorDimension] = ordinaryBias;
          else values.fill(0, row, row + embedding);
        }
      },
    },
  ];
}

const alignUp = (offset: number) => Math.ceil(offset / alignment) * alignment;
const elementCount = (tensor: Tensor) => tensor.dims.reduce((product, dim) => product * dim, 1);

interface Layout {
  header: Buffer;
  /** Offsets are relative to the start of the tensor data, which follows the padded header. */
  placed: { tensor: Tensor; offset: number }[];
  bytes: number;
}

function layout(options: TinyModelOptions): Layout {
  const size = options.size ?? 'tiny';
  if (!modelSizes.includes(size)) throw new Error(`Unknown model size "${size}" (expected ${modelSizes.join(' or ')})`);
  const shape = shapes[size];
  const vocabulary = buildVocabulary(options.thinking ?? false, options.fim);
  let dataBytes = 0;
  const placed = tensors(shape, vocabulary, options.embedding ?? false).map((tensor) => {
    const offset = alignUp(dataBytes);
    dataBytes = offset + elementCount(tensor) * 4;
    return { tensor, offset };
  });
  const entries = Object.entries(metadata(size, shape, vocabulary, options));
  const header = Buffer.concat([
    Buffer.from('GGUF', 'latin1'),
    uint32(3),
    uint64(placed.length),
    uint64(entries.length),
    ...entries.map(([key, value]) => Buffer.concat([string(key), encodeValue(value)])),
    ...placed.map(({ tensor, offset }) =>
      Buffer.concat([
        string(tensor.name),
        uint32(tensor.dims.length),
        ...tensor.dims.map(uint64),
        uint32(0), // GGML_TYPE_F32
        uint64(offset),
      ]),
    ),
  ]);
  const paddedHeader = Buffer.concat([header, Buffer.alloc(alignUp(header.length) - header.length)]);
  return { header: paddedHeader, placed, bytes: paddedHeader.length + dataBytes };
}

async function* fileChunks(plan: Layout, random: Random) {
  yield plan.header;
  let written = 0;
  for (const { tensor, offset } of plan.placed) {
    if (offset > written) yield Buffer.alloc(offset - written);
    const values = new Float32Array(elementCount(tensor));
    tensor.fill(values, random);
    // GGUF is little-endian, as are the platforms node-llama-cpp and wllama run on.
    yield new Uint8Array(values.buffer);
    written = offset + values.byteLength;
  }
}

function checkSeed(seed: number) {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new Error(`Seed must be an integer from 0 to ${0xffffffff}, got ${seed}`);
  }
}

/** Size in bytes of the file writeTinyModel would write, without writing it. */
export function tinyModelBytes(options: TinyModelOptions = {}): number {
  return layout(options).bytes;
}

export async function writeTinyModel(outPath: string, options: TinyModelOptions = {}): Promise<{ path: string; bytes: number }> {
  const seed = options.seed ?? defaultSeed;
  checkSeed(seed);
  const plan = layout(options);
  await pipeline(fileChunks(plan, createRandom(seed)), createWriteStream(outPath));
  return { path: outPath, bytes: plan.bytes };
}
