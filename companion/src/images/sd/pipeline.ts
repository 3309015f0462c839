/**
 * Stable Diffusion on onnxruntime-node: CLIP tokenizer and text encoder, a UNet loop with
 * classifier-free guidance (negative prompt as the unconditional text), the model's sampler,
 * and the VAE. Image-to-image starts from the encoded source noised to `strength`; inpainting
 * either feeds an inpainting UNet its mask and masked-image latents, or (any other model) keeps
 * the unmasked latents pinned to the source at each step's noise level.
 */
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { ClipTokenizer } from './clip-tokenizer.js';
import { SeededRandom } from './random.js';
import { createSampler, guidanceEmbedding, type Sampler } from './schedulers.js';
import type { SdLayout } from './sd-folder.js';

export interface SdStep {
  /** 1-based step just finished, and the steps of this image. */
  step: number;
  steps: number;
  latents: Float32Array;
  channels: number;
  latentWidth: number;
  latentHeight: number;
}

export interface SdRunRequest {
  prompt: string;
  negativePrompt?: string;
  width: number;
  height: number;
  steps: number;
  guidance: number;
  seed: number;
  /** Image-to-image: RGB bytes (width × height × 3) already at the output size. */
  source?: Uint8Array;
  /** Inpainting: one byte per pixel, >= 128 repaints. */
  mask?: Uint8Array;
  /** 0-1, image-to-image only. */
  strength?: number;
  /** Checked before every UNet run (an AbortSignal, or the engine thread's stop flag): aborting stops the run between steps. */
  signal?: Pick<AbortSignal, 'throwIfAborted'>;
  onStep?(step: SdStep): void;
}

export interface SdRunResult {
  /** RGB bytes, width × height × 3. */
  pixels: Uint8Array;
  /** Steps the UNet ran (fewer than requested with strength < 1). */
  steps: number;
}

type Session = ort.InferenceSession;

function tensorMeta(session: Session, name: string): { type: string; shape: ReadonlyArray<number | string> } | undefined {
  const entry = session.inputMetadata.find((meta) => meta.name === name);
  return entry && entry.isTensor ? { type: entry.type, shape: entry.shape } : undefined;
}

export class SdPipeline {
  private constructor(
    readonly layout: SdLayout,
    private readonly tokenizer: ClipTokenizer,
    private readonly textEncoder: Session,
    private readonly unet: Session,
    private readonly vaeDecoder: Session,
    private readonly vaeEncoder: Session | undefined,
  ) {}

  static async load(layout: SdLayout, threads: number): Promise<SdPipeline> {
    const options: ort.InferenceSession.SessionOptions = {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    };
    const open = (part: string) => ort.InferenceSession.create(join(layout.dir, part, 'model.onnx'), options);
    const sessions: Session[] = [];
    try {
      for (const part of ['text_encoder', 'unet', 'vae_decoder']) sessions.push(await open(part));
      const encoder = layout.hasVaeEncoder ? await open('vae_encoder') : undefined;
      const [text, unet, decoder] = sessions as [Session, Session, Session];
      const sample = tensorMeta(unet, 'sample');
      if (!sample) throw new Error('unet/model.onnx has no "sample" input; it is not a Stable Diffusion UNet export.');
      if (sample.type !== 'float32') throw new Error(`unet/model.onnx takes ${sample.type} latents; Hearth runs float32 exports only.`);
      return new SdPipeline(layout, ClipTokenizer.load(join(layout.dir, 'tokenizer')), text, unet, decoder, encoder);
    } catch (error) {
      await Promise.allSettled(sessions.map((session) => session.release()));
      throw error;
    }
  }

  async release(): Promise<void> {
    await Promise.allSettled([this.textEncoder, this.unet, this.vaeDecoder, this.vaeEncoder].map((session) => session?.release()));
  }

  /** The bare UNet session, for measuring the pipeline's own overhead against it. */
  get unetSession(): Session {
    return this.unet;
  }

  async run(request: SdRunRequest): Promise<SdRunResult> {
    const { layout } = this;
    const latentWidth = request.width / layout.vaeScale;
    const latentHeight = request.height / layout.vaeScale;
    const channels = layout.latentChannels;
    const size = channels * latentWidth * latentHeight;
    const random = new SeededRandom(request.seed);
    const inpaintingUnet = layout.unetInChannels === channels * 2 + 1;
    const timeCondition = tensorMeta(this.unet, 'timestep_cond');
    const guided = request.guidance > 1 && !timeCondition;
    const context = await this.encodePrompts(request.prompt, guided ? (request.negativePrompt ?? '') : undefined);

    const strength = request.source && !inpaintingUnet ? Math.min(1, Math.max(0, request.strength ?? 0.75)) : 1;
    const sampler = createSampler(layout.scheduler, request.steps, strength);
    const noise = random.normals(size);
    let source: Float32Array | undefined;
    let latents: Float32Array;
    if (request.source && !inpaintingUnet) {
      source = await this.encodeImage(request.source, request.width, request.height);
      latents = sampler.timesteps.length > 0 ? sampler.addNoise(source, noise, 0) : source;
    } else {
      latents = noise.map((value) => value * sampler.initNoiseSigma);
    }
    const latentMask = request.mask ? maskToLatents(request.mask, request.width, latentWidth, latentHeight, layout.vaeScale) : undefined;
    const extra = inpaintingUnet ? await this.inpaintingInputs(request, latentMask, latentWidth, latentHeight) : undefined;
    const embedding = timeCondition ? guidanceEmbedding(request.guidance, Number(timeCondition.shape[1] ?? 256)) : undefined;

    for (let index = 0; index < sampler.timesteps.length; index++) {
      request.signal?.throwIfAborted();
      const output = await this.predict(sampler, index, latents, context, { guided, guidance: request.guidance, extra, embedding, latentWidth, latentHeight });
      latents = sampler.step(output, index, latents, () => random.normals(size));
      if (source && latentMask) {
        const pinned = sampler.addNoise(source, noise, index + 1);
        for (let i = 0; i < size; i++) {
          const repaint = latentMask[i % (latentWidth * latentHeight)]!;
          latents[i] = repaint * latents[i]! + (1 - repaint) * pinned[i]!;
        }
      }
      request.onStep?.({ step: index + 1, steps: sampler.timesteps.length, latents, channels, latentWidth, latentHeight });
    }
    request.signal?.throwIfAborted();
    return { pixels: await this.decode(latents, latentWidth, latentHeight), steps: sampler.timesteps.length };
  }

  /** Prompt embeddings; with guidance, [negative; prompt] as one batch of two. */
  private async encodePrompts(prompt: string, negative: string | undefined): Promise<{ data: Float32Array; dims: number[] }> {
    const texts = negative === undefined ? [prompt] : [negative, prompt];
    const parts: Float32Array[] = [];
    let dims: readonly number[] = [];
    const inputName = this.textEncoder.inputNames.includes('input_ids') ? 'input_ids' : this.textEncoder.inputNames[0]!;
    const wide = tensorMeta(this.textEncoder, inputName)?.type === 'int64';
    for (const text of texts) {
      const ids = this.tokenizer.encode(text);
      const tensor = wide
        ? new ort.Tensor(
            'int64',
            BigInt64Array.from(ids, (id) => BigInt(id)),
            [1, ids.length],
          )
        : new ort.Tensor('int32', ids, [1, ids.length]);
      const outputs = await this.textEncoder.run({ [inputName]: tensor });
      const hidden = outputs.last_hidden_state ?? outputs[this.textEncoder.outputNames[0]!]!;
      parts.push(hidden.data as Float32Array);
      dims = hidden.dims;
    }
    const data = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      data.set(part, offset);
      offset += part.length;
    }
    return { data, dims: [texts.length, ...dims.slice(1)] };
  }

  private async predict(
    sampler: Sampler,
    index: number,
    latents: Float32Array,
    context: { data: Float32Array; dims: number[] },
    options: { guided: boolean; guidance: number; extra?: Float32Array; embedding?: Float32Array; latentWidth: number; latentHeight: number },
  ): Promise<Float32Array> {
    const scaled = sampler.scaleInput(latents, index);
    const input = options.extra ? concatChannels(scaled, options.extra, latents.length, options.extra.length) : scaled;
    const batch = options.guided ? 2 : 1;
    const perImage = input.length;
    const sample = new Float32Array(perImage * batch);
    for (let b = 0; b < batch; b++) sample.set(input, b * perImage);
    const channels = perImage / (options.latentWidth * options.latentHeight);
    const feeds: Record<string, ort.Tensor> = {
      sample: new ort.Tensor('float32', sample, [batch, channels, options.latentHeight, options.latentWidth]),
      timestep: this.timestepTensor(sampler.timesteps[index]!),
      encoder_hidden_states: new ort.Tensor('float32', context.data, context.dims),
    };
    if (options.embedding) feeds.timestep_cond = new ort.Tensor('float32', options.embedding, [1, options.embedding.length]);
    const outputs = await this.unet.run(feeds);
    const predicted = (outputs.out_sample ?? outputs[this.unet.outputNames[0]!]!).data as Float32Array;
    if (!options.guided) return predicted;
    const size = latents.length;
    const result = new Float32Array(size);
    for (let i = 0; i < size; i++) result[i] = predicted[i]! + options.guidance * (predicted[size + i]! - predicted[i]!);
    return result;
  }

  private timestepTensor(t: number): ort.Tensor {
    const meta = tensorMeta(this.unet, 'timestep');
    const dims = meta && meta.shape.length === 0 ? [] : [1];
    if (meta?.type === 'int64') return new ort.Tensor('int64', BigInt64Array.from([BigInt(Math.trunc(t))]), dims);
    if (meta?.type === 'int32') return new ort.Tensor('int32', Int32Array.from([Math.trunc(t)]), dims);
    return new ort.Tensor('float32', Float32Array.from([t]), dims);
  }

  /** Source pixels to scaled latents; an encoder that returns mean and log-variance gives the mean. */
  private async encodeImage(pixels: Uint8Array, width: number, height: number): Promise<Float32Array> {
    if (!this.vaeEncoder) throw new Error('This model has no vae_encoder, so it cannot edit images.');
    const name = this.vaeEncoder.inputNames.includes('sample') ? 'sample' : this.vaeEncoder.inputNames[0]!;
    const outputs = await this.vaeEncoder.run({ [name]: new ort.Tensor('float32', toPlanar(pixels, width, height), [1, 3, height, width]) });
    const latent = outputs[this.vaeEncoder.outputNames[0]!]!;
    const size = this.layout.latentChannels * (width / this.layout.vaeScale) * (height / this.layout.vaeScale);
    const data = (latent.data as Float32Array).subarray(0, size);
    return data.map((value) => value * this.layout.scalingFactor);
  }

  /** An inpainting UNet's extra channels: the latent mask, then the latents of the image with the masked area blanked. */
  private async inpaintingInputs(
    request: SdRunRequest,
    latentMask: Float32Array | undefined,
    latentWidth: number,
    latentHeight: number,
  ): Promise<Float32Array> {
    const cells = latentWidth * latentHeight;
    const mask = latentMask ?? new Float32Array(cells).fill(1);
    const pixels = request.source ?? new Uint8Array(request.width * request.height * 3).fill(128);
    const blanked = Uint8Array.from(pixels);
    for (let p = 0; p < request.width * request.height; p++) {
      // Blanked pixels are 0 in [-1, 1] space, i.e. mid-grey bytes.
      if (!request.mask || request.mask[p]! >= 128) blanked.fill(128, p * 3, p * 3 + 3);
    }
    const masked = await this.encodeImage(blanked, request.width, request.height);
    const extra = new Float32Array(cells + masked.length);
    extra.set(mask, 0);
    extra.set(masked, cells);
    return extra;
  }

  private async decode(latents: Float32Array, latentWidth: number, latentHeight: number): Promise<Uint8Array> {
    const name = this.vaeDecoder.inputNames.includes('latent_sample') ? 'latent_sample' : this.vaeDecoder.inputNames[0]!;
    const scaled = latents.map((value) => value / this.layout.scalingFactor);
    const outputs = await this.vaeDecoder.run({ [name]: new ort.Tensor('float32', scaled, [1, this.layout.latentChannels, latentHeight, latentWidth]) });
    const image = outputs[this.vaeDecoder.outputNames[0]!]!;
    const [, , height, width] = image.dims as [number, number, number, number];
    return toInterleaved(image.data as Float32Array, width, height);
  }
}

/** RGB bytes (HWC) to planar floats in [-1, 1] (CHW). */
export function toPlanar(pixels: Uint8Array, width: number, height: number): Float32Array {
  const plane = width * height;
  const out = new Float32Array(plane * 3);
  for (let p = 0; p < plane; p++) for (let c = 0; c < 3; c++) out[c * plane + p] = pixels[p * 3 + c]! / 127.5 - 1;
  return out;
}

/** Planar floats in [-1, 1] to RGB bytes. */
export function toInterleaved(data: Float32Array, width: number, height: number): Uint8Array {
  const plane = width * height;
  const out = new Uint8Array(plane * 3);
  for (let p = 0; p < plane; p++) for (let c = 0; c < 3; c++) out[p * 3 + c] = Math.round(Math.min(1, Math.max(0, data[c * plane + p]! / 2 + 0.5)) * 255);
  return out;
}

/** The pixel mask sampled at each latent cell's centre (nearest), as 1 = repaint, 0 = keep. */
function maskToLatents(mask: Uint8Array, width: number, latentWidth: number, latentHeight: number, scale: number): Float32Array {
  const out = new Float32Array(latentWidth * latentHeight);
  const half = Math.floor(scale / 2);
  for (let y = 0; y < latentHeight; y++)
    for (let x = 0; x < latentWidth; x++) out[y * latentWidth + x] = mask[(y * scale + half) * width + x * scale + half]! >= 128 ? 1 : 0;
  return out;
}

function concatChannels(first: Float32Array, second: Float32Array, firstLength: number, secondLength: number): Float32Array {
  const out = new Float32Array(firstLength + secondLength);
  out.set(first, 0);
  out.set(second, firstLength);
  return out;
}
