/**
 * Writes a tiny Stable Diffusion pipeline folder in the common ONNX export layout
 * (text_encoder, unet, vae_decoder, vae_encoder as model.onnx; tokenizer/vocab.json and
 * merges.txt; scheduler/scheduler_config.json; model_index.json; per-part config.json) with
 * the input and output names, element types and dynamic axes of diffusers' exporter, and
 * random weights. Channel counts are small; Hearth reads them from the configs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToUnicode } from '../../companion/src/images/sd/clip-tokenizer.js';
import { GraphBuilder, seededValues, type ElementType } from './graph.js';

export type TinyScheduler = 'EulerAncestralDiscreteScheduler' | 'EulerDiscreteScheduler' | 'LCMScheduler';

export interface TinySdOptions {
  /** Latent channels (Stable Diffusion: 4). */
  latentChannels?: number;
  /** Text encoder width (SD 1.x: 768). */
  hidden?: number;
  /** Token sequence length (CLIP: 77). */
  maxLength?: number;
  /** Latent side of the default size (SD 1.x: 64, i.e. 512 px). */
  sampleSize?: number;
  /** A UNet whose sample has latents + mask + masked-image latents (an inpainting model). */
  inpainting?: boolean;
  timestepType?: ElementType;
  scheduler?: TinyScheduler;
  /** LCM-distilled UNets take a guidance embedding of this width as `timestep_cond`. */
  timeCondDim?: number;
  /** Width and depth of the UNet's convolutions: more makes each step slower (tests of cancelling). */
  unetWidth?: number;
  unetLayers?: number;
  /** Leave parts out, to test incomplete folders. */
  omit?: ('text_encoder' | 'unet' | 'vae_decoder' | 'vae_encoder' | 'tokenizer')[];
  seed?: number;
}

/** Words whose merges make whole tokens; anything else falls back to smaller pieces and bytes. */
const WORDS = ['a', 'cat', 'dog', 'photo', 'of', 'the', 'red', 'blurry', 'house', 'hearth', 'fire', 'ugly'];

export function writeTinyStableDiffusion(dir: string, options: TinySdOptions = {}): string {
  const settings = {
    latentChannels: 4,
    hidden: 8,
    maxLength: 16,
    sampleSize: 8,
    timestepType: 'int64' as ElementType,
    scheduler: 'EulerAncestralDiscreteScheduler' as TinyScheduler,
    unetWidth: 8,
    unetLayers: 0,
    seed: 1,
    ...options,
  };
  const omit = new Set(options.omit ?? []);
  const part = (name: string) => {
    mkdirSync(join(dir, name), { recursive: true });
    return join(dir, name);
  };
  const json = (path: string, value: unknown) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
  const vaeScale = 8;
  const unetInChannels = settings.inpainting ? settings.latentChannels * 2 + 1 : settings.latentChannels;

  mkdirSync(dir, { recursive: true });
  json(join(dir, 'model_index.json'), {
    _class_name: settings.inpainting ? 'OnnxStableDiffusionInpaintPipeline' : 'OnnxStableDiffusionPipeline',
    _diffusers_version: '0.30.0',
    scheduler: ['diffusers', settings.scheduler],
    text_encoder: ['diffusers', 'OnnxRuntimeModel'],
    tokenizer: ['transformers', 'CLIPTokenizer'],
    unet: ['diffusers', 'OnnxRuntimeModel'],
    vae_decoder: ['diffusers', 'OnnxRuntimeModel'],
    vae_encoder: ['diffusers', 'OnnxRuntimeModel'],
  });
  json(join(part('scheduler'), 'scheduler_config.json'), schedulerConfig(settings.scheduler));

  const vocabulary = clipVocabulary();
  if (!omit.has('tokenizer')) {
    const folder = part('tokenizer');
    json(join(folder, 'vocab.json'), vocabulary.vocab);
    writeFileSync(join(folder, 'merges.txt'), ['#version: 0.2', ...vocabulary.merges].join('\n') + '\n');
    json(join(folder, 'tokenizer_config.json'), {
      model_max_length: settings.maxLength,
      do_lower_case: true,
      bos_token: '<|startoftext|>',
      eos_token: '<|endoftext|>',
      pad_token: '<|endoftext|>',
      unk_token: '<|endoftext|>',
    });
  }
  const vocabSize = Object.keys(vocabulary.vocab).length;
  let seed = settings.seed * 1000;
  const weights = (builder: GraphBuilder, dims: number[], scale = 0.3) =>
    builder.weight(
      dims,
      seededValues(
        dims.reduce((a, b) => a * b, 1),
        seed++,
        scale,
      ),
    );

  if (!omit.has('text_encoder')) {
    const graph = new GraphBuilder('text_encoder');
    const ids = graph.input('input_ids', 'int32', ['batch', 'sequence']);
    const embedded = graph.node('Gather', [weights(graph, [vocabSize, settings.hidden], 1), ids], { axis: 0 });
    graph.node('Tanh', [embedded], {}, ['last_hidden_state']);
    graph.node('ReduceMean', ['last_hidden_state'], { axes: [1], keepdims: 0 }, ['pooler_output']);
    graph.output('last_hidden_state', 'float', ['batch', 'sequence', settings.hidden]);
    graph.output('pooler_output', 'float', ['batch', settings.hidden]);
    writeFileSync(join(part('text_encoder'), 'model.onnx'), graph.encode());
  }

  if (!omit.has('unet')) {
    const graph = new GraphBuilder('unet');
    const sample = graph.input('sample', 'float', ['batch', 'channels', 'height', 'width']);
    const timestep = graph.input('timestep', settings.timestepType, ['batch']);
    const context = graph.input('encoder_hidden_states', 'float', ['batch', 'sequence', settings.hidden]);
    const width = settings.unetWidth;
    let x = graph.node('Conv', [sample, weights(graph, [width, unetInChannels, 3, 3]), weights(graph, [width], 0.1)], { pads: [1, 1, 1, 1] });
    for (let layer = 0; layer < settings.unetLayers; layer++) {
      x = graph.node('Relu', [graph.node('Conv', [x, weights(graph, [width, width, 3, 3], 0.05)], { pads: [1, 1, 1, 1] })]);
    }
    const predicted = graph.node('Conv', [x, weights(graph, [settings.latentChannels, width, 1, 1])]);
    const pooled = graph.node('ReduceMean', [context], { axes: [1], keepdims: 0 });
    const unsqueeze = (value: string) => graph.node('Unsqueeze', [value, graph.int64s([2, 3])]);
    let conditioned = graph.node('Add', [predicted, unsqueeze(graph.node('MatMul', [pooled, weights(graph, [settings.hidden, settings.latentChannels])]))]);
    if (settings.timeCondDim) {
      const guidance = graph.input('timestep_cond', 'float', ['batch', settings.timeCondDim]);
      conditioned = graph.node('Add', [
        conditioned,
        unsqueeze(graph.node('MatMul', [guidance, weights(graph, [settings.timeCondDim, settings.latentChannels])])),
      ]);
    }
    const time = graph.node('Mul', [graph.node('Cast', [timestep], { to: 1 }), graph.weight([1], [0.001])]);
    graph.node('Add', [conditioned, graph.node('Reshape', [time, graph.int64s([-1, 1, 1, 1])])], {}, ['out_sample']);
    graph.output('out_sample', 'float', ['batch', 'channels', 'height', 'width']);
    const folder = part('unet');
    writeFileSync(join(folder, 'model.onnx'), graph.encode());
    json(join(folder, 'config.json'), {
      _class_name: 'UNet2DConditionModel',
      in_channels: unetInChannels,
      out_channels: settings.latentChannels,
      sample_size: settings.sampleSize,
      block_out_channels: [width],
      cross_attention_dim: settings.hidden,
      ...(settings.timeCondDim ? { time_cond_proj_dim: settings.timeCondDim } : {}),
    });
  }

  const vaeConfig = {
    _class_name: 'AutoencoderKL',
    latent_channels: settings.latentChannels,
    block_out_channels: [4, 4, 4, 4],
    scaling_factor: 0.18215,
    sample_size: settings.sampleSize * vaeScale,
  };
  if (!omit.has('vae_decoder')) {
    const graph = new GraphBuilder('vae_decoder');
    const latents = graph.input('latent_sample', 'float', ['batch', 'channels', 'height', 'width']);
    const expanded = graph.node('Conv', [latents, weights(graph, [3 * vaeScale * vaeScale, settings.latentChannels, 1, 1], 0.08)]);
    graph.node('Tanh', [graph.node('DepthToSpace', [expanded], { blocksize: vaeScale, mode: 'CRD' })], {}, ['sample']);
    graph.output('sample', 'float', ['batch', 3, 'height', 'width']);
    const folder = part('vae_decoder');
    writeFileSync(join(folder, 'model.onnx'), graph.encode());
    json(join(folder, 'config.json'), vaeConfig);
  }
  if (!omit.has('vae_encoder')) {
    const graph = new GraphBuilder('vae_encoder');
    const pixels = graph.input('sample', 'float', ['batch', 'channels', 'height', 'width']);
    const packed = graph.node('SpaceToDepth', [pixels], { blocksize: vaeScale });
    graph.node('Conv', [packed, weights(graph, [settings.latentChannels, 3 * vaeScale * vaeScale, 1, 1], 0.2)], {}, ['latent_sample']);
    graph.output('latent_sample', 'float', ['batch', settings.latentChannels, 'height', 'width']);
    const folder = part('vae_encoder');
    writeFileSync(join(folder, 'model.onnx'), graph.encode());
    json(join(folder, 'config.json'), vaeConfig);
  }
  return dir;
}

function schedulerConfig(name: TinyScheduler): Record<string, unknown> {
  const common = {
    _class_name: name,
    num_train_timesteps: 1000,
    beta_start: 0.00085,
    beta_end: 0.012,
    beta_schedule: 'scaled_linear',
    prediction_type: 'epsilon',
  };
  if (name === 'LCMScheduler') return { ...common, original_inference_steps: 50, timestep_scaling: 10, timestep_spacing: 'leading', steps_offset: 1 };
  // SD-Turbo ships EulerDiscreteScheduler with trailing spacing for its one-step sampling.
  if (name === 'EulerDiscreteScheduler') return { ...common, timestep_spacing: 'trailing', steps_offset: 1 };
  return { ...common, timestep_spacing: 'linspace', steps_offset: 1 };
}

/**
 * A CLIP-style byte-level BPE vocabulary: the 256 byte symbols, the same with the end-of-word
 * mark, the merges that build WORDS, then the two special tokens (as in CLIP's own files).
 */
export function clipVocabulary(): { vocab: Record<string, number>; merges: string[] } {
  const symbols = [...bytesToUnicode().values()];
  const tokens = [...symbols, ...symbols.map((symbol) => `${symbol}</w>`)];
  const merges: string[] = [];
  for (const word of WORDS) {
    const pieces = [...word];
    pieces[pieces.length - 1] += '</w>';
    while (pieces.length > 1) {
      const merged = pieces[0]! + pieces[1]!;
      const line = `${pieces[0]} ${pieces[1]}`;
      if (!merges.includes(line)) {
        merges.push(line);
        tokens.push(merged);
      }
      pieces.splice(0, 2, merged);
    }
  }
  tokens.push('<|startoftext|>', '<|endoftext|>');
  const vocab: Record<string, number> = {};
  let next = 0;
  for (const token of tokens) if (!(token in vocab)) vocab[token] = next++;
  return { vocab, merges };
}
