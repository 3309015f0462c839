/**
 * A tiny random-weight multimodal projector (`mmproj`) that llama.cpp's multimodal library (mtmd)
 * loads beside a tiny test model: a LLaVA-1.5 shaped vision encoder (projector type "mlp", the
 * simplest one mtmd takes) of one transformer block, whose two-layer MLP projects each image patch
 * to the text model's embedding size. Images are resized to `imageSize`×`imageSize` and cut into
 * `patchSize` squares, so every image costs `(imageSize / patchSize)²` tokens of the text model's
 * context. Its answers mean nothing; it exists so tests can send images through a real engine.
 */
import { alignment, fillUniform, layoutFile, matrix, ones, writePlanned, zeros, type Layout, type Metadata, type Tensor } from './writer.js';
import { defaultSeed, modelEmbedding, type ModelSize } from './write-model.js';

export interface TinyProjectorOptions {
  /** The text model it serves (its embedding size is the projector's output size); default tiny. */
  size?: ModelSize;
  /** Output size instead of the model's (a mismatched projector, for tests that refuse one). */
  embedding?: number;
  seed?: number;
}

/** The side an image is scaled to, and the side of one patch: 4 patches, so 4 tokens an image. */
export const projectorImage = { imageSize: 8, patchSize: 4 } as const;

/** How many text-model tokens one image takes with this projector. */
export const projectorImageTokens = (projectorImage.imageSize / projectorImage.patchSize) ** 2;

const vision = { embedding: 32, heads: 4, feedForward: 64, blocks: 1, hidden: 64 } as const;
const channels = 3;

function metadata(output: number): Metadata {
  return {
    'general.architecture': { string: 'clip' },
    'general.name': { string: 'Hearth tiny test projector' },
    'general.alignment': { uint32: alignment },
    'general.file_type': { uint32: 0 },
    'clip.has_vision_encoder': { bool: true },
    'clip.has_audio_encoder': { bool: false },
    'clip.projector_type': { string: 'mlp' },
    'clip.use_gelu': { bool: true },
    'clip.vision.image_size': { uint32: projectorImage.imageSize },
    'clip.vision.patch_size': { uint32: projectorImage.patchSize },
    'clip.vision.embedding_length': { uint32: vision.embedding },
    'clip.vision.feed_forward_length': { uint32: vision.feedForward },
    'clip.vision.block_count': { uint32: vision.blocks },
    'clip.vision.attention.head_count': { uint32: vision.heads },
    'clip.vision.attention.layer_norm_epsilon': { float32: 1e-5 },
    'clip.vision.projection_dim': { uint32: output },
    'clip.vision.image_mean': { float32s: [0.5, 0.5, 0.5] },
    'clip.vision.image_std': { float32s: [0.5, 0.5, 0.5] },
  };
}

const vector = (name: string, length: number, fill = zeros): Tensor => ({ name, dims: [length], fill });

function tensors(output: number): Tensor[] {
  const { embedding, feedForward, hidden } = vision;
  const patches = projectorImage.imageSize / projectorImage.patchSize;
  const { patchSize } = projectorImage;
  const blocks = Array.from({ length: vision.blocks }, (_, block): Tensor[] => [
    vector(`v.blk.${block}.ln1.weight`, embedding, ones),
    vector(`v.blk.${block}.ln1.bias`, embedding),
    matrix(`v.blk.${block}.attn_q.weight`, embedding, embedding),
    vector(`v.blk.${block}.attn_q.bias`, embedding),
    matrix(`v.blk.${block}.attn_k.weight`, embedding, embedding),
    vector(`v.blk.${block}.attn_k.bias`, embedding),
    matrix(`v.blk.${block}.attn_v.weight`, embedding, embedding),
    vector(`v.blk.${block}.attn_v.bias`, embedding),
    matrix(`v.blk.${block}.attn_out.weight`, embedding, embedding),
    vector(`v.blk.${block}.attn_out.bias`, embedding),
    vector(`v.blk.${block}.ln2.weight`, embedding, ones),
    vector(`v.blk.${block}.ln2.bias`, embedding),
    matrix(`v.blk.${block}.ffn_up.weight`, embedding, feedForward),
    vector(`v.blk.${block}.ffn_up.bias`, feedForward),
    matrix(`v.blk.${block}.ffn_down.weight`, feedForward, embedding),
    vector(`v.blk.${block}.ffn_down.bias`, embedding),
  ]);
  return [
    // ggml_conv_2d's kernel: [width, height, input channels, output channels].
    {
      name: 'v.patch_embd.weight',
      dims: [patchSize, patchSize, channels, embedding],
      fill: (values, random) => fillUniform(values, random, Math.sqrt(3 / (patchSize * patchSize * channels))),
    },
    { name: 'v.position_embd.weight', dims: [embedding, patches * patches], fill: (values, random) => fillUniform(values, random, 0.1) },
    vector('v.pre_ln.weight', embedding, ones),
    vector('v.pre_ln.bias', embedding),
    ...blocks.flat(),
    matrix('mm.0.weight', embedding, hidden),
    vector('mm.0.bias', hidden),
    matrix('mm.2.weight', hidden, output),
    vector('mm.2.bias', output),
  ];
}

function layout(options: TinyProjectorOptions): Layout {
  const output = options.embedding ?? modelEmbedding(options.size ?? 'tiny');
  if (!Number.isInteger(output) || output <= 0) throw new Error(`Projector output size must be a positive integer, got ${output}`);
  return layoutFile(metadata(output), tensors(output));
}

/** Size in bytes of the file writeTinyProjector would write, without writing it. */
export function tinyProjectorBytes(options: TinyProjectorOptions = {}): number {
  return layout(options).bytes;
}

export function writeTinyProjector(outPath: string, options: TinyProjectorOptions = {}): Promise<{ path: string; bytes: number }> {
  return writePlanned(outPath, options, layout, defaultSeed);
}
