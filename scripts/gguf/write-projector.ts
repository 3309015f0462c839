/**
 * A tiny random-weight multimodal projector (`mmproj`) that llama.cpp's multimodal library (mtmd)
 * loads beside a tiny test model, with an image encoder, a sound encoder, or both:
 * - images: a LLaVA-1.5 shaped vision encoder (projector type "mlp", the simplest one mtmd takes)
 *   of one transformer block, whose two-layer MLP projects each image patch to the text model's
 *   embedding size. Images are resized to `imageSize`×`imageSize` and cut into `patchSize`
 *   squares, so every image costs `(imageSize / patchSize)²` tokens of the text model's context.
 * - sounds: an Ultravox shaped audio encoder (projector type "ultravox": Whisper's two 1-D
 *   convolutions over the log-mel spectrogram mtmd computes itself, one transformer block, then
 *   `stackFactor` frames stacked into one and a two-layer SwiGLU MLP). mtmd cuts a sound into
 *   30-second windows of 3000 mel frames (the last one padded with silence), and each window costs
 *   3000 / 2 / `stackFactor` tokens. Ultravox puts no marker text around them, so a sound costs
 *   exactly its tokens.
 * With both, each encoder names its own projector type (`clip.vision.projector_type`,
 * `clip.audio.projector_type`), as mixed-modality projectors do. Its answers mean nothing; it
 * exists so tests can send images and sounds through a real engine.
 */
import { alignment, fillUniform, layoutFile, matrix, ones, writePlanned, zeros, type Layout, type Metadata, type Tensor } from './writer.js';
import { defaultSeed, modelEmbedding, type ModelSize } from './write-model.js';

/** The image encoder's shape: the side an image is scaled to, the side of one patch, and the transformer's size. */
export interface ImageEncoderShape {
  imageSize: number;
  patchSize: number;
  embedding: number;
  heads: number;
  feedForward: number;
  blocks: number;
  /** The projector MLP's hidden width. */
  hidden: number;
}

export interface TinyProjectorOptions {
  /** The text model it serves (its embedding size is the projector's output size); default tiny. */
  size?: ModelSize;
  /** Output size instead of the model's (a mismatched projector, for tests that refuse one). */
  embedding?: number;
  seed?: number;
  /** An image encoder (default true). */
  vision?: boolean;
  /** A sound encoder (default false). */
  audio?: boolean;
  /** The image encoder's shape instead of the tiny one (a larger one makes encoding measurable, for benchmarks). */
  image?: ImageEncoderShape;
}

/** The tiny image encoder: 4 patches, so 4 tokens an image. */
export const tinyImageEncoder: ImageEncoderShape = { imageSize: 8, patchSize: 4, embedding: 32, heads: 4, feedForward: 64, blocks: 1, hidden: 64 };

/** The side an image is scaled to, and the side of one patch (the tiny image encoder's). */
export const projectorImage = { imageSize: tinyImageEncoder.imageSize, patchSize: tinyImageEncoder.patchSize } as const;

/** How many text-model tokens an image takes with an image encoder of this shape. */
export function imageTokens(shape: ImageEncoderShape): number {
  return (shape.imageSize / shape.patchSize) ** 2;
}

/** How many text-model tokens one image takes with the tiny projector. */
export const projectorImageTokens = imageTokens(tinyImageEncoder);

/** The tiny sound encoder: mel bins of the spectrogram, the transformer, and how many frames one token stacks. */
export const projectorAudio = { melBins: 8, embedding: 16, heads: 2, feedForward: 32, blocks: 1, hidden: 32, stackFactor: 50 } as const;

/** mtmd's window: 30 seconds of 16 kHz sound as 3000 mel frames, halved by the encoder's strided convolution. */
const windowFrames = 3000;

/**
 * How many text-model tokens a sound of up to 30 seconds takes with the tiny projector (each
 * further 30 seconds takes as many again): 3000 mel frames, halved by the second convolution,
 * `stackFactor` frames a token.
 */
export const projectorAudioTokens = windowFrames / 2 / projectorAudio.stackFactor;

const channels = 3;

function checkShape(shape: ImageEncoderShape): void {
  for (const [name, value] of Object.entries(shape))
    if (!Number.isInteger(value) || value <= 0) throw new Error(`The image encoder's ${name} must be a positive integer, got ${value}`);
  if (shape.imageSize % shape.patchSize !== 0) throw new Error(`The image size (${shape.imageSize}) must be a multiple of the patch size (${shape.patchSize})`);
  if (shape.embedding % shape.heads !== 0) throw new Error(`The image encoder's width (${shape.embedding}) must be a multiple of its heads (${shape.heads})`);
}

function visionMetadata(output: number, shape: ImageEncoderShape, mixed: boolean): Metadata {
  return {
    [mixed ? 'clip.vision.projector_type' : 'clip.projector_type']: { string: 'mlp' },
    'clip.use_gelu': { bool: true },
    'clip.vision.image_size': { uint32: shape.imageSize },
    'clip.vision.patch_size': { uint32: shape.patchSize },
    'clip.vision.embedding_length': { uint32: shape.embedding },
    'clip.vision.feed_forward_length': { uint32: shape.feedForward },
    'clip.vision.block_count': { uint32: shape.blocks },
    'clip.vision.attention.head_count': { uint32: shape.heads },
    'clip.vision.attention.layer_norm_epsilon': { float32: 1e-5 },
    'clip.vision.projection_dim': { uint32: output },
    'clip.vision.image_mean': { float32s: [0.5, 0.5, 0.5] },
    'clip.vision.image_std': { float32s: [0.5, 0.5, 0.5] },
  };
}

function audioMetadata(output: number, mixed: boolean): Metadata {
  const { melBins, embedding, heads, feedForward, blocks, stackFactor } = projectorAudio;
  return {
    [mixed ? 'clip.audio.projector_type' : 'clip.projector_type']: { string: 'ultravox' },
    'clip.audio.num_mel_bins': { uint32: melBins },
    'clip.audio.embedding_length': { uint32: embedding },
    'clip.audio.feed_forward_length': { uint32: feedForward },
    'clip.audio.block_count': { uint32: blocks },
    'clip.audio.attention.head_count': { uint32: heads },
    'clip.audio.attention.layer_norm_epsilon': { float32: 1e-5 },
    'clip.audio.projection_dim': { uint32: output },
    'clip.audio.projector.stack_factor': { uint32: stackFactor },
  };
}

function metadata(output: number, options: Required<Pick<TinyProjectorOptions, 'vision' | 'audio' | 'image'>>): Metadata {
  const mixed = options.vision && options.audio;
  return {
    'general.architecture': { string: 'clip' },
    'general.name': { string: 'Hearth tiny test projector' },
    'general.alignment': { uint32: alignment },
    'general.file_type': { uint32: 0 },
    'clip.has_vision_encoder': { bool: options.vision },
    'clip.has_audio_encoder': { bool: options.audio },
    ...(options.vision ? visionMetadata(output, options.image, mixed) : {}),
    ...(options.audio ? audioMetadata(output, mixed) : {}),
  };
}

const vector = (name: string, length: number, fill = zeros): Tensor => ({ name, dims: [length], fill });

/** One pre-norm transformer block of a CLIP-style encoder (`v` images, `a` sounds); Whisper's key projection has no bias. */
function block(prefix: 'v' | 'a', index: number, embedding: number, feedForward: number): Tensor[] {
  const name = (part: string) => `${prefix}.blk.${index}.${part}`;
  return [
    vector(name('ln1.weight'), embedding, ones),
    vector(name('ln1.bias'), embedding),
    matrix(name('attn_q.weight'), embedding, embedding),
    vector(name('attn_q.bias'), embedding),
    matrix(name('attn_k.weight'), embedding, embedding),
    ...(prefix === 'v' ? [vector(name('attn_k.bias'), embedding)] : []),
    matrix(name('attn_v.weight'), embedding, embedding),
    vector(name('attn_v.bias'), embedding),
    matrix(name('attn_out.weight'), embedding, embedding),
    vector(name('attn_out.bias'), embedding),
    vector(name('ln2.weight'), embedding, ones),
    vector(name('ln2.bias'), embedding),
    matrix(name('ffn_up.weight'), embedding, feedForward),
    vector(name('ffn_up.bias'), feedForward),
    matrix(name('ffn_down.weight'), feedForward, embedding),
    vector(name('ffn_down.bias'), embedding),
  ];
}

function visionTensors(output: number, shape: ImageEncoderShape): Tensor[] {
  const { embedding, feedForward, hidden, patchSize } = shape;
  const patches = shape.imageSize / patchSize;
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
    ...Array.from({ length: shape.blocks }, (_, index) => block('v', index, embedding, feedForward)).flat(),
    matrix('mm.0.weight', embedding, hidden),
    vector('mm.0.bias', hidden),
    matrix('mm.2.weight', hidden, output),
    vector('mm.2.bias', output),
  ];
}

/** A 1-D convolution's kernel as ggml_conv_1d takes it: [kernel width, input channels, output channels]. */
function convolution(name: string, inputs: number, outputs: number): Tensor {
  const width = 3;
  return { name, dims: [width, inputs, outputs], fill: (values, random) => fillUniform(values, random, Math.sqrt(3 / (width * inputs))) };
}

function audioTensors(output: number): Tensor[] {
  const { melBins, embedding, feedForward, blocks, hidden, stackFactor } = projectorAudio;
  const stacked = embedding * stackFactor;
  return [
    convolution('a.conv1d.1.weight', melBins, embedding),
    // A convolution's bias is [1, channels], so it adds along the frames.
    { name: 'a.conv1d.1.bias', dims: [1, embedding], fill: zeros },
    convolution('a.conv1d.2.weight', embedding, embedding),
    { name: 'a.conv1d.2.bias', dims: [1, embedding], fill: zeros },
    // One position for each frame the strided convolution leaves of a 30-second window.
    { name: 'a.position_embd.weight', dims: [embedding, windowFrames / 2], fill: (values, random) => fillUniform(values, random, 0.1) },
    ...Array.from({ length: blocks }, (_, index) => block('a', index, embedding, feedForward)).flat(),
    vector('mm.a.norm_pre.weight', stacked, ones),
    // SwiGLU: the first layer makes twice the hidden width, half of it the gate.
    matrix('mm.a.mlp.1.weight', stacked, 2 * hidden),
    vector('mm.a.norm_mid.weight', hidden, ones),
    matrix('mm.a.mlp.2.weight', hidden, output),
  ];
}

function layout(options: TinyProjectorOptions): Layout {
  const output = options.embedding ?? modelEmbedding(options.size ?? 'tiny');
  if (!Number.isInteger(output) || output <= 0) throw new Error(`Projector output size must be a positive integer, got ${output}`);
  const chosen = { vision: options.vision ?? true, audio: options.audio ?? false, image: options.image ?? tinyImageEncoder };
  if (!chosen.vision && !chosen.audio) throw new Error('A projector needs an image encoder, a sound encoder or both.');
  checkShape(chosen.image);
  return layoutFile(metadata(output, chosen), [...(chosen.vision ? visionTensors(output, chosen.image) : []), ...(chosen.audio ? audioTensors(output) : [])]);
}

/** Size in bytes of the file writeTinyProjector would write, without writing it. */
export function tinyProjectorBytes(options: TinyProjectorOptions = {}): number {
  return layout(options).bytes;
}

export function writeTinyProjector(outPath: string, options: TinyProjectorOptions = {}): Promise<{ path: string; bytes: number }> {
  return writePlanned(outPath, options, layout, defaultSeed);
}
