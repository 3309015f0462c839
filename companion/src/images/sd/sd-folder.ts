/**
 * What a Stable Diffusion ONNX folder holds, read without loading it: which parts exist, the
 * configs that size the latents, and from those the model's capabilities, defaults and limits.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ImageCapabilities, ImageDefaults, ImageLimits } from '#shared/api/images.js';
import { samplerKind, type SchedulerConfig } from './schedulers.js';

export const SD_PARTS = ['text_encoder', 'unet', 'vae_decoder'] as const;

export interface SdLayout {
  dir: string;
  /** Latent channels the UNet denoises. */
  latentChannels: number;
  /** Channels of the UNet's `sample` input: latents, or latents + mask + masked-image latents (inpainting). */
  unetInChannels: number;
  /** Pixels per latent cell (VAE downsampling). */
  vaeScale: number;
  /** Width and height must be multiples of this (the UNet halves the latents between blocks). */
  sizeMultiple: number;
  scalingFactor: number;
  /** Default side in pixels. */
  defaultSide: number;
  scheduler: SchedulerConfig;
  hasVaeEncoder: boolean;
  /** Bytes of the ONNX files and their external weights. */
  bytes: number;
}

export interface SdInspection {
  layout?: SdLayout;
  /** Why the folder cannot be used, naming the missing or unreadable part. */
  error?: string;
  capabilities: ImageCapabilities;
  defaults: ImageDefaults;
  limits: ImageLimits;
}

/** A folder looks like a diffusers ONNX export when it has model_index.json or a unet/model.onnx. */
export function looksLikeSdFolder(dir: string): boolean {
  return existsSync(join(dir, 'model_index.json')) || existsSync(join(dir, 'unet', 'model.onnx'));
}

function readJson(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(path);
    else if (!entry.name.endsWith('.json') && !entry.name.endsWith('.txt')) total += statSync(path).size;
  }
  return total;
}

/** A model that can do nothing (a broken folder); every image model's capabilities start from it. */
export const NO_CAPABILITIES: ImageCapabilities = {
  generate: false,
  edit: false,
  upscale: false,
  mask: false,
  multiple_references: false,
  negative_prompt: false,
  strength: false,
};
export const NO_DEFAULTS: ImageDefaults = { size: null, steps: null, guidance: null };

export function inspectSdFolder(dir: string): SdInspection {
  const missing = [
    ...SD_PARTS.filter((part) => !existsSync(join(dir, part, 'model.onnx'))).map((part) => `${part}/model.onnx`),
    ...['vocab.json', 'merges.txt'].filter((file) => !existsSync(join(dir, 'tokenizer', file))).map((file) => `tokenizer/${file}`),
  ];
  const blank = {
    capabilities: NO_CAPABILITIES,
    defaults: NO_DEFAULTS,
    limits: { size_multiple: null, max_pixels: 0, steps: null, scales: [] },
  };
  if (missing.length > 0)
    return { ...blank, error: `The model folder ${dir} is incomplete: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing.` };
  let unet: Record<string, unknown>, vae: Record<string, unknown>, scheduler: SchedulerConfig;
  try {
    unet = readJson(join(dir, 'unet', 'config.json')) ?? {};
    vae = readJson(join(dir, 'vae_decoder', 'config.json')) ?? readJson(join(dir, 'vae', 'config.json')) ?? {};
    scheduler = (readJson(join(dir, 'scheduler', 'scheduler_config.json')) ?? {}) as SchedulerConfig;
  } catch (error) {
    return { ...blank, error: `A config file in ${dir} is not valid JSON: ${(error as Error).message}` };
  }
  const vaeBlocks = Array.isArray(vae.block_out_channels) ? vae.block_out_channels.length : 4;
  const vaeScale = 2 ** Math.max(0, vaeBlocks - 1);
  const latentChannels = numberOr(vae.latent_channels, numberOr(unet.out_channels, 4));
  const unetInChannels = numberOr(unet.in_channels, latentChannels);
  const unetBlocks = Array.isArray(unet.block_out_channels) ? unet.block_out_channels.length : 4;
  const layout: SdLayout = {
    dir,
    latentChannels,
    unetInChannels,
    vaeScale,
    sizeMultiple: vaeScale * 2 ** Math.max(0, unetBlocks - 1),
    scalingFactor: numberOr(vae.scaling_factor, 0.18215),
    defaultSide: numberOr(unet.sample_size, 64) * vaeScale,
    scheduler,
    hasVaeEncoder: existsSync(join(dir, 'vae_encoder', 'model.onnx')),
    bytes: folderBytes(dir),
  };
  const inpainting = unetInChannels === latentChannels * 2 + 1;
  const kind = samplerKind(scheduler);
  // SD-Turbo: Euler with trailing spacing, distilled for one step without guidance.
  const turbo = kind === 'euler' && scheduler.timestep_spacing === 'trailing';
  const guided = kind === 'euler_a' || (kind === 'euler' && !turbo);
  const side = layout.defaultSide;
  return {
    layout,
    capabilities: {
      generate: !inpainting,
      edit: layout.hasVaeEncoder,
      upscale: false,
      mask: layout.hasVaeEncoder,
      multiple_references: false,
      negative_prompt: guided,
      strength: layout.hasVaeEncoder && !inpainting,
    },
    defaults: { size: `${side}x${side}`, steps: kind === 'lcm' ? 4 : turbo ? 1 : 25, guidance: kind === 'lcm' ? 1.5 : turbo ? 0 : 7.5 },
    limits: { size_multiple: layout.sizeMultiple, max_pixels: side * side * 4, steps: kind === 'lcm' ? [1, 8] : [1, 150], scales: [] },
  };
}
