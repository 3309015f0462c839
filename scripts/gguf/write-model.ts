import { alignment, createRandom, fillUniform, layoutFile, matrix, ones, writePlanned, type Layout, type Metadata, type Tensor } from './writer.js';

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
  /** The context the model says it was trained on (default 2,048): a long one for clients that send long prompts, such as Claude Code. */
  contextLength?: number;
  /** Transformer blocks, in place of the size's own count (a draft model: the same network, fewer blocks). */
  blocks?: number;
  /**
   * Blocks appended after the others whose output projections (`attn_output`, `ffn_down`) are zero:
   * they cost a full block's compute but leave the residual stream as it was, so the model's output
   * equals that of the same options without them, token for token. Their other weights come from a
   * random source of their own, so the rest of the file holds the same values either way. A draft
   * and target pair for speculative decoding: `{ blocks: 2 }` drafts for `{ blocks: 2, zeroExtraBlocks: 6 }`.
   */
  zeroExtraBlocks?: number;
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

const defaultContextLength = 2048;
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

/** llama.cpp's LLAMA_POOLING_TYPE_MEAN. */
const meanPooling = 1;

function metadata(size: ModelSize, shape: Shape, vocabulary: Vocabulary, options: TinyModelOptions): Metadata {
  const embedding = options.embedding ?? false;
  const kind: Metadata = embedding
    ? { 'llama.pooling_type': { uint32: meanPooling } }
    : { 'tokenizer.chat_template': { string: options.thinking ? thinkingTemplate : chatTemplate } };
  return {
    'general.architecture': { string: 'llama' },
    'general.name': { string: `Hearth ${size} test ${embedding ? 'embedding ' : ''}model` },
    'general.alignment': { uint32: alignment },
    'general.file_type': { uint32: 0 },
    'llama.context_length': { uint32: options.contextLength ?? defaultContextLength },
    'llama.embedding_length': { uint32: shape.embedding },
    'llama.block_count': { uint32: shape.blocks + (options.zeroExtraBlocks ?? 0) },
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

function fimIds(vocabulary: Vocabulary): Metadata {
  const fim = vocabulary.fim;
  if (!fim) return {};
  return {
    'tokenizer.ggml.fim_pre_token_id': { uint32: fim.prefix },
    'tokenizer.ggml.fim_suf_token_id': { uint32: fim.suffix },
    'tokenizer.ggml.fim_mid_token_id': { uint32: fim.middle },
  };
}

/** A block whose output projections are zero: its other weights from a random source of its own (the file's own stream is left alone). */
function zeroOutputBlock(block: number, shape: Shape, seed: number): Tensor[] {
  const { embedding, feedForward } = shape;
  const kvWidth = (embedding / shape.heads) * shape.kvHeads;
  const own = (name: string, columns: number, rows: number): Tensor => ({
    name,
    dims: [columns, rows],
    fill: (values) => fillUniform(values, createRandom((seed + block * 7919) >>> 0), Math.sqrt(3 / columns)),
  });
  const zero = (name: string, columns: number, rows: number): Tensor => ({ name, dims: [columns, rows], fill: (values) => values.fill(0) });
  return [
    { name: `blk.${block}.attn_norm.weight`, dims: [embedding], fill: ones },
    own(`blk.${block}.attn_q.weight`, embedding, embedding),
    own(`blk.${block}.attn_k.weight`, embedding, kvWidth),
    own(`blk.${block}.attn_v.weight`, embedding, kvWidth),
    zero(`blk.${block}.attn_output.weight`, embedding, embedding),
    { name: `blk.${block}.ffn_norm.weight`, dims: [embedding], fill: ones },
    own(`blk.${block}.ffn_gate.weight`, embedding, feedForward),
    own(`blk.${block}.ffn_up.weight`, embedding, feedForward),
    zero(`blk.${block}.ffn_down.weight`, feedForward, embedding),
  ];
}

function tensors(shape: Shape, vocabulary: Vocabulary, pooled: boolean, zeroBlocks = 0, seed = defaultSeed): Tensor[] {
  const { embedding, feedForward } = shape;
  const kvWidth = (embedding / shape.heads) * shape.kvHeads;
  const vocabularySize = vocabulary.tokens.length;
  const extra = Array.from({ length: zeroBlocks }, (_, index) => zeroOutputBlock(shape.blocks + index, shape, seed));
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
    ...extra.flat(),
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

function layout(options: TinyModelOptions): Layout {
  const size = options.size ?? 'tiny';
  if (!modelSizes.includes(size)) throw new Error(`Unknown model size "${size}" (expected ${modelSizes.join(' or ')})`);
  const shape = { ...shapes[size], ...(options.blocks !== undefined ? { blocks: options.blocks } : {}) };
  for (const [name, value] of [
    ['blocks', shape.blocks],
    ['zeroExtraBlocks', options.zeroExtraBlocks ?? 0],
  ] as const)
    if (!Number.isInteger(value) || value < 0 || value > 256) throw new Error(`${name} must be an integer from 0 to 256, got ${value}`);
  const vocabulary = buildVocabulary(options.thinking ?? false, options.fim);
  const parts = tensors(shape, vocabulary, options.embedding ?? false, options.zeroExtraBlocks, options.seed ?? defaultSeed);
  return layoutFile(metadata(size, shape, vocabulary, options), parts);
}

/** Size in bytes of the file writeTinyModel would write, without writing it. */
export function tinyModelBytes(options: TinyModelOptions = {}): number {
  return layout(options).bytes;
}

export function writeTinyModel(outPath: string, options: TinyModelOptions = {}): Promise<{ path: string; bytes: number }> {
  return writePlanned(outPath, options, layout, defaultSeed);
}

/** The embedding size (`llama.embedding_length`) of a test model of this size. */
export function modelEmbedding(size: ModelSize): number {
  if (!modelSizes.includes(size)) throw new Error(`Unknown model size "${size}" (expected ${modelSizes.join(' or ')})`);
  return shapes[size].embedding;
}
