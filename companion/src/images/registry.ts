/**
 * Every image model a request may name: Stable Diffusion ONNX folders and upscaler folders in
 * the models folders, ESRGAN weights shipped in installed npm packages, the built-in Lanczos
 * resampler, and `<provider>/<model>` image models of configured OpenAI-compatible providers.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ImageLimits, ImageModelRecord } from '#shared/api/images.js';
import type { ProviderSettings } from '#shared/api/config.js';
import { esrganFolder, esrganPackages, type EsrganSource } from './upscale/esrgan.js';
import { inspectSdFolder, looksLikeSdFolder, NO_CAPABILITIES, NO_DEFAULTS, type SdInspection } from './sd/sd-folder.js';

/** Largest upscaled output: Lanczos is cheap; ESRGAN on the CPU takes minutes at this size. */
export const LANCZOS_MAX_PIXELS = 8192 * 8192;
export const ESRGAN_MAX_PIXELS = 4096 * 4096;
/** Provider images: what the provider accepts is its business; this only bounds what Hearth stores. */
const PROVIDER_MAX_PIXELS = 4096 * 4096;

export type ImageModel =
  | { id: string; engine: 'onnx-sd'; source: 'models-dir'; dir: string; inspection: SdInspection }
  | { id: string; engine: 'esrgan'; source: 'package' | 'models-dir'; esrgan: EsrganSource }
  | { id: 'lanczos'; engine: 'lanczos'; source: 'builtin' }
  | { id: string; engine: 'provider'; source: 'provider'; provider: string; model: string };

/** The folder's models: its own sub-folders (and the folder itself when it is one model). */
function scanFolder(dir: string, into: Map<string, ImageModel>): void {
  if (!existsSync(dir)) return;
  const candidates = [
    dir,
    ...readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name)),
  ];
  for (const folder of candidates) {
    const id = basename(folder)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-');
    if (into.has(id)) continue;
    if (looksLikeSdFolder(folder)) {
      into.set(id, { id, engine: 'onnx-sd', source: 'models-dir', dir: folder, inspection: inspectSdFolder(folder) });
      continue;
    }
    const esrgan = folder === dir ? undefined : esrganFolder(folder, id);
    if (esrgan) into.set(id, { id, engine: 'esrgan', source: 'models-dir', esrgan });
  }
}

let packaged: EsrganSource[] | undefined;

export function scanImageModels(folders: string[], providers: ProviderSettings[]): ImageModel[] {
  const found = new Map<string, ImageModel>();
  for (const folder of folders) {
    try {
      if (existsSync(folder) && statSync(folder).isDirectory()) scanFolder(folder, found);
    } catch {
      // An unreadable folder lists nothing; the others still count.
    }
  }
  packaged ??= esrganPackages();
  for (const esrgan of packaged) if (!found.has(esrgan.id)) found.set(esrgan.id, { id: esrgan.id, engine: 'esrgan', source: 'package', esrgan });
  found.set('lanczos', { id: 'lanczos', engine: 'lanczos', source: 'builtin' });
  for (const provider of providers) {
    for (const model of provider.image_models ?? []) {
      const id = `${provider.name}/${model}`;
      found.set(id, { id, engine: 'provider', source: 'provider', provider: provider.name, model });
    }
  }
  return [...found.values()];
}

export function imageModelRecord(model: ImageModel, loaded: boolean): ImageModelRecord {
  const base = { id: model.id, object: 'model' as const, kind: 'image' as const, source: model.source, engine: model.engine, loaded };
  switch (model.engine) {
    case 'onnx-sd': {
      const { capabilities, defaults, limits, error } = model.inspection;
      return { ...base, capabilities, defaults, limits, ...(error ? { error } : {}) };
    }
    case 'esrgan':
      return {
        ...base,
        capabilities: { ...NO_CAPABILITIES, upscale: true },
        defaults: NO_DEFAULTS,
        limits: upscaleLimits(ESRGAN_MAX_PIXELS, [...model.esrgan.files.keys()]),
      };
    case 'lanczos':
      return { ...base, capabilities: { ...NO_CAPABILITIES, upscale: true }, defaults: NO_DEFAULTS, limits: upscaleLimits(LANCZOS_MAX_PIXELS, [2, 3, 4, 8]) };
    case 'provider':
      return {
        ...base,
        capabilities: { ...NO_CAPABILITIES, generate: true, edit: true, mask: true },
        defaults: { size: '1024x1024', steps: null, guidance: null },
        limits: { size_multiple: null, max_pixels: PROVIDER_MAX_PIXELS, steps: null, scales: [] },
      };
  }
}

function upscaleLimits(maxPixels: number, scales: number[]): ImageLimits {
  return { size_multiple: null, max_pixels: maxPixels, steps: null, scales: [...scales].sort((a, b) => a - b) };
}
