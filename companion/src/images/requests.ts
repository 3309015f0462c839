/**
 * Checks an image request against the model it names (capabilities, sizes, steps, scales) and
 * turns it into a plan the runner executes. Every refusal is a HearthError naming its field.
 */
import type { ImageEditFields, ImageGenerationRequest, ImageModelRecord, ImageOperation, ImageUpscaleFields } from '#shared/api/images.js';
import { HearthError } from '../errors.js';
import { decodeMask, decodeRgb, imageSize, type RgbImage } from './image-io.js';
import type { ImageModel } from './registry.js';
import { randomSeed } from './sd/random.js';
import { createSampler } from './sd/schedulers.js';
import { tileCount } from './upscale/esrgan.js';

/** A generation as the route hands it over: the request of POST /v1/images/generations. */
export type GenerationInput = ImageGenerationRequest;

/** An edit: the form's fields, and its files (bytes) in order. */
export type EditInput = ImageEditFields & { images: Uint8Array[]; mask?: Uint8Array };

/** An upscale: the form's fields with the scale settled, and the image (bytes). */
export type UpscaleInput = ImageUpscaleFields & { scale: number; image: Uint8Array };

type SdModel = Extract<ImageModel, { engine: 'onnx-sd' }>;
type Upscaler = Extract<ImageModel, { engine: 'esrgan' | 'lanczos' }>;
type ProviderModel = Extract<ImageModel, { engine: 'provider' }>;
type SdPlan = Extract<JobPlan, { kind: 'sd' }>;

export type JobPlan =
  | {
      kind: 'sd';
      operation: 'generate' | 'edit';
      model: SdModel;
      prompt: string;
      negativePrompt?: string;
      n: number;
      width: number;
      height: number;
      steps: number;
      guidance: number;
      seed: number;
      /** Denoising steps per image actually run (fewer with strength < 1). */
      stepsPerImage: number;
      source?: Uint8Array;
      mask?: Uint8Array;
      strength?: number;
    }
  | { kind: 'upscale'; operation: 'upscale'; model: Upscaler; image: RgbImage; scale: number; tiles: number }
  | {
      kind: 'provider';
      operation: 'generate' | 'edit';
      model: ProviderModel;
      prompt: string;
      n: number;
      size?: string;
      files?: { images: Uint8Array[]; mask?: Uint8Array };
    };

export function planSummary(plan: JobPlan): {
  operation: ImageOperation;
  steps: number;
  prompt: string | null;
  negativePrompt: string | null;
  size: string | null;
  seed: number | null;
} {
  if (plan.kind === 'sd')
    return {
      operation: plan.operation,
      steps: plan.n * plan.stepsPerImage,
      prompt: plan.prompt,
      negativePrompt: plan.negativePrompt ?? null,
      size: `${plan.width}x${plan.height}`,
      seed: plan.seed,
    };
  if (plan.kind === 'upscale')
    return {
      operation: 'upscale',
      steps: plan.tiles,
      prompt: null,
      negativePrompt: null,
      size: `${plan.image.width * plan.scale}x${plan.image.height * plan.scale}`,
      seed: null,
    };
  return { operation: plan.operation, steps: 1, prompt: plan.prompt, negativePrompt: null, size: plan.size ?? null, seed: null };
}

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

function missing(record: ImageModelRecord, param: string, what: string): never {
  throw new HearthError('model_capability_missing', `${record.id} cannot ${what} (its capabilities: ${capabilityList(record)}).`, { param });
}

function capabilityList(record: ImageModelRecord): string {
  const names = Object.entries(record.capabilities)
    .filter(([, on]) => on)
    .map(([name]) => name);
  return names.join(', ') || 'none';
}

function usable(record: ImageModelRecord): void {
  if (record.error) throw new HearthError('model_incomplete', `${record.id} cannot be used: ${record.error}`, { param: 'model' });
}

export function parseSize(size: string, record: ImageModelRecord): { width: number; height: number } {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  if (!match) refuse('size', `size must be WIDTHxHEIGHT, e.g. ${record.defaults.size ?? '512x512'}; got "${size}".`);
  const width = Number(match[1]);
  const height = Number(match[2]);
  const multiple = record.limits.size_multiple ?? 1;
  if (width < multiple || height < multiple || width % multiple !== 0 || height % multiple !== 0) {
    refuse('size', `${record.id} needs a width and height that are multiples of ${multiple}; ${size} is not.`);
  }
  if (width * height > record.limits.max_pixels) {
    refuse('size', `${size} is ${width * height} pixels; ${record.id} makes at most ${record.limits.max_pixels} (memory on this machine bounds it).`);
  }
  return { width, height };
}

function checkCommon(input: GenerationInput, record: ImageModelRecord): { n: number; seed: number; steps: number; guidance: number } {
  if (!input.prompt.trim()) refuse('prompt', 'prompt must not be empty.');
  if (input.negative_prompt !== undefined && input.negative_prompt !== '' && !record.capabilities.negative_prompt) {
    missing(record, 'negative_prompt', 'take a negative prompt');
  }
  const n = input.n ?? 1;
  const [low, high] = record.limits.steps ?? [1, 1];
  const steps = input.steps ?? record.defaults.steps ?? 1;
  if (record.limits.steps && (steps < low || steps > high)) refuse('steps', `${record.id} takes ${low} to ${high} steps; got ${steps}.`);
  return { n, seed: input.seed ?? randomSeed(), steps, guidance: input.guidance ?? record.defaults.guidance ?? 0 };
}

/** A model whose record says it cannot be used, or of the wrong kind, is refused here. */
export function planGeneration(model: ImageModel, record: ImageModelRecord, input: GenerationInput): JobPlan {
  usable(record);
  if (!record.capabilities.generate) {
    missing(record, 'model', record.capabilities.edit ? 'generate from a prompt alone (it edits images: use /v1/images/edits)' : 'generate images');
  }
  const common = checkCommon(input, record);
  const size = input.size ?? record.defaults.size ?? '512x512';
  const { width, height } = parseSize(size, record);
  if (model.engine === 'provider') return { kind: 'provider', operation: 'generate', model, prompt: input.prompt, n: common.n, size: input.size };
  if (model.engine !== 'onnx-sd') missing(record, 'model', 'generate images');
  const stepsPerImage = createSampler(model.inspection.layout!.scheduler, common.steps).timesteps.length;
  return sdPlan(model, input, { operation: 'generate', width, height, ...common, stepsPerImage });
}

/** A Stable Diffusion plan: the request's prompts, and what the checks settled. */
function sdPlan(model: SdModel, input: GenerationInput, settled: Omit<SdPlan, 'kind' | 'model' | 'prompt' | 'negativePrompt'>): SdPlan {
  return { kind: 'sd', model, prompt: input.prompt, negativePrompt: input.negative_prompt || undefined, ...settled };
}

export async function planEdit(model: ImageModel, record: ImageModelRecord, input: EditInput): Promise<JobPlan> {
  usable(record);
  if (!record.capabilities.edit) missing(record, 'model', 'edit images (it only generates: use /v1/images/generations)');
  if (input.images.length === 0) refuse('image', 'Send the image to edit as the multipart field "image".');
  if (input.images.length > 1 && !record.capabilities.multiple_references) missing(record, 'image', 'take more than one reference image');
  if (input.mask && !record.capabilities.mask) missing(record, 'mask', 'take a mask');
  if (input.strength !== undefined && !record.capabilities.strength) missing(record, 'strength', 'take an edit strength');
  const common = checkCommon(input, record);
  const first = await imageSize(input.images[0]!, 'image');
  if (input.mask) await imageSize(input.mask, 'mask');
  if (model.engine === 'provider') {
    if (input.size) parseSize(input.size, record);
    return {
      kind: 'provider',
      operation: 'edit',
      model,
      prompt: input.prompt,
      n: common.n,
      size: input.size,
      files: { images: input.images, mask: input.mask },
    };
  }
  if (model.engine !== 'onnx-sd') missing(record, 'model', 'edit images');
  const { width, height } = input.size ? parseSize(input.size, record) : fitSize(first.width, first.height, record);
  const source = (await decodeRgb(input.images[0]!, width, height)).pixels;
  const mask = input.mask ? await decodeMask(input.mask, width, height) : undefined;
  const layout = model.inspection.layout!;
  const inpaintingUnet = layout.unetInChannels === layout.latentChannels * 2 + 1;
  const strength = input.strength ?? 0.75;
  const stepsPerImage = createSampler(layout.scheduler, common.steps, inpaintingUnet ? 1 : strength).timesteps.length;
  return sdPlan(model, input, { operation: 'edit', width, height, ...common, stepsPerImage, source, mask, strength });
}

/** The source's size rounded to the model's multiple, scaled down to fit its pixel limit. */
function fitSize(width: number, height: number, record: ImageModelRecord): { width: number; height: number } {
  const multiple = record.limits.size_multiple ?? 1;
  const shrink = Math.min(1, Math.sqrt(record.limits.max_pixels / (width * height)));
  const round = (value: number) => Math.max(multiple, Math.floor((value * shrink) / multiple) * multiple);
  return { width: round(width), height: round(height) };
}

export async function planUpscale(model: ImageModel, record: ImageModelRecord, input: UpscaleInput): Promise<JobPlan> {
  usable(record);
  if (model.engine !== 'esrgan' && model.engine !== 'lanczos') missing(record, 'model', 'upscale images');
  if (!record.limits.scales.includes(input.scale)) refuse('scale', `${record.id} upscales by ${record.limits.scales.join(', ')}; got ${input.scale}.`);
  const size = await imageSize(input.image, 'image');
  const outPixels = size.width * input.scale * size.height * input.scale;
  if (outPixels > record.limits.max_pixels) {
    refuse(
      'image',
      `Upscaling ${size.width}x${size.height} by ${input.scale} makes ${outPixels} pixels; ${record.id} makes at most ${record.limits.max_pixels}.`,
    );
  }
  const image = await decodeRgb(input.image);
  return {
    kind: 'upscale',
    operation: 'upscale',
    model,
    image,
    scale: input.scale,
    tiles: model.engine === 'esrgan' ? tileCount(image.width, image.height, model.esrgan.patchSize) : 1,
  };
}
