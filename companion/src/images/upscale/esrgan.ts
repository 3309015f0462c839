/**
 * ESRGAN super-resolution with UpscalerJS's models (@upscalerjs/esrgan-slim, -medium, -thick:
 * the weights ship inside the npm packages) on TensorFlow.js's WebAssembly backend, which needs
 * no native download. The image is processed in overlapping tiles, so memory stays bounded and
 * progress can be reported tile by tile.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RgbImage } from '../image-io.js';

/**
 * The few TensorFlow.js calls used here. The package is imported by a computed name so its
 * type declarations (which pull in an old copy of the WebGPU DOM types and clash with the web
 * app's) stay out of every program that imports this file.
 */
interface Tensor {
  dataSync(): Float32Array;
}
interface LayersModel {
  predict(input: Tensor): Tensor | Tensor[];
  dispose(): void;
}
interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
}
interface Tf {
  tidy<T>(work: () => T): T;
  tensor4d(values: Float32Array, shape: [number, number, number, number]): Tensor;
  loadLayersModel(handler: { load(): Promise<unknown> }): Promise<LayersModel>;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
}
const TFJS = '@tensorflow/tfjs';
const TFJS_WASM = '@tensorflow/tfjs-backend-wasm';

const require = createRequire(import.meta.url);
export const ESRGAN_PACKAGES = ['slim', 'medium', 'thick'] as const;
const SCALES = [2, 3, 4, 8];

/** An ESRGAN model family found on disk: one model.json (+ weight shards) per scale. */
export interface EsrganSource {
  id: string;
  source: 'package' | 'models-dir';
  /** model.json path per scale. */
  files: Map<number, string>;
  /** Pixel value range the model takes and gives. */
  range: [number, number];
  patchSize: number;
  bytes: number;
}

function packageRoot(file: string): string {
  let folder = dirname(file);
  while (!existsSync(join(folder, 'package.json')) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

/** The @upscalerjs/esrgan-* packages that are installed. */
export function esrganPackages(): EsrganSource[] {
  const found: EsrganSource[] = [];
  for (const variant of ESRGAN_PACKAGES) {
    const files = new Map<number, string>();
    let range: [number, number] = [0, 255];
    let patchSize = 128;
    for (const scale of SCALES) {
      try {
        const resolved = require.resolve(`@upscalerjs/esrgan-${variant}/${scale}x`);
        const loaded = require(resolved) as { default?: EsrganDefinition } & EsrganDefinition;
        const definition = loaded.default ?? loaded;
        const path = join(packageRoot(resolved), definition._internals.path);
        if (!existsSync(path)) continue;
        files.set(scale, path);
        range = definition.inputRange ?? range;
        patchSize = definition.meta?.patchSize ?? patchSize;
      } catch {
        // Not installed, or no model at this scale.
      }
    }
    if (files.size > 0) found.push({ id: `esrgan-${variant}`, source: 'package', files, range, patchSize, bytes: weightBytes(files) });
  }
  return found;
}

interface EsrganDefinition {
  _internals: { path: string };
  inputRange?: [number, number];
  meta?: { patchSize?: number };
}

/**
 * An upscaler folder in a models folder: `x2/model.json`, `x4/model.json`, ... (TensorFlow.js
 * layers models, as in the UpscalerJS packages), with an optional `upscaler.json`
 * `{"input_range": [0, 1], "patch_size": 64}`; the range defaults to 0-255.
 */
export function esrganFolder(dir: string, id: string): EsrganSource | undefined {
  const files = new Map<number, string>();
  for (const scale of SCALES) {
    for (const candidate of [join(dir, `x${scale}`, 'model.json'), join(dir, 'models', `x${scale}`, 'model.json')]) {
      if (existsSync(candidate) && !files.has(scale)) files.set(scale, candidate);
    }
  }
  if (files.size === 0) return undefined;
  const settingsPath = join(dir, 'upscaler.json');
  const settings = existsSync(settingsPath) ? (JSON.parse(readFileSync(settingsPath, 'utf8')) as { input_range?: [number, number]; patch_size?: number }) : {};
  return { id, source: 'models-dir', files, range: settings.input_range ?? [0, 255], patchSize: settings.patch_size ?? 128, bytes: weightBytes(files) };
}

function weightBytes(files: Map<number, string>): number {
  let total = 0;
  for (const file of files.values())
    for (const entry of readdirSync(dirname(file), { withFileTypes: true })) if (entry.isFile()) total += statSync(join(dirname(file), entry.name)).size;
  return total;
}

/** How many tiles an image of this size is upscaled in. */
export function tileCount(width: number, height: number, patchSize: number): number {
  return Math.ceil(width / patchSize) * Math.ceil(height / patchSize);
}

let backend: Promise<Tf> | undefined;

/** TensorFlow.js on its WebAssembly backend, set up once per process. */
export function tensorflow(): Promise<Tf> {
  backend ??= (async () => {
    // Emscripten's loader adds process-wide handlers that rethrow every uncaught error and
    // unhandled rejection; the companion keeps its own, so they are taken off again.
    const before = { uncaughtException: process.listeners('uncaughtException'), unhandledRejection: process.listeners('unhandledRejection') };
    try {
      const tf = (await import(TFJS)) as Tf;
      const wasm = (await import(TFJS_WASM)) as { setWasmPaths(prefix: string): void };
      wasm.setWasmPaths(`${dirname(require.resolve(TFJS_WASM))}/`);
      if (!(await tf.setBackend('wasm'))) throw new Error('The TensorFlow.js WebAssembly backend could not start.');
      await tf.ready();
      return tf;
    } finally {
      for (const listener of process.listeners('uncaughtException'))
        if (!before.uncaughtException.includes(listener)) process.removeListener('uncaughtException', listener);
      for (const listener of process.listeners('unhandledRejection'))
        if (!before.unhandledRejection.includes(listener)) process.removeListener('unhandledRejection', listener);
    }
  })();
  return backend;
}

export interface EsrganRun {
  /** Checked before every tile (an AbortSignal, or the engine thread's stop flag). */
  signal?: Pick<AbortSignal, 'throwIfAborted'>;
  onTile?(done: number, total: number): void | Promise<void>;
}

/** One scale of an ESRGAN model, loaded from its model.json and shards. */
export class EsrganModel {
  private constructor(
    private readonly tf: Tf,
    private readonly model: LayersModel,
    readonly scale: number,
    private readonly range: [number, number],
    private readonly patchSize: number,
  ) {}

  static async load(source: EsrganSource, scale: number): Promise<EsrganModel> {
    const file = source.files.get(scale);
    if (!file) throw new Error(`${source.id} has no x${scale} model.`);
    const tf = await tensorflow();
    const json = JSON.parse(readFileSync(file, 'utf8')) as {
      modelTopology: object;
      format?: string;
      weightsManifest: { paths: string[]; weights: WeightSpec[] }[];
    };
    const shards = json.weightsManifest.flatMap((group) => group.paths.map((path) => readFileSync(join(dirname(file), path))));
    const weights = Buffer.concat(shards);
    const handler = {
      load: async () => ({
        modelTopology: json.modelTopology,
        format: json.format,
        weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
        weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
      }),
    };
    const model = await tf.loadLayersModel(handler);
    return new EsrganModel(tf, model, scale, source.range, source.patchSize);
  }

  async upscale(image: RgbImage, run: EsrganRun = {}): Promise<RgbImage> {
    const { tf, scale, patchSize } = this;
    const pad = 8;
    const [low, high] = this.range;
    const span = (high - low) / 255;
    const outWidth = image.width * scale;
    const out = new Uint8Array(outWidth * image.height * scale * 3);
    const total = tileCount(image.width, image.height, patchSize);
    let done = 0;
    for (let y0 = 0; y0 < image.height; y0 += patchSize) {
      for (let x0 = 0; x0 < image.width; x0 += patchSize) {
        run.signal?.throwIfAborted();
        const x1 = Math.min(image.width, x0 + patchSize);
        const y1 = Math.min(image.height, y0 + patchSize);
        const [px0, py0] = [Math.max(0, x0 - pad), Math.max(0, y0 - pad)];
        const [px1, py1] = [Math.min(image.width, x1 + pad), Math.min(image.height, y1 + pad)];
        const tileWidth = px1 - px0;
        const tileHeight = py1 - py0;
        const input = new Float32Array(tileWidth * tileHeight * 3);
        for (let y = 0; y < tileHeight; y++)
          for (let x = 0; x < tileWidth; x++)
            for (let c = 0; c < 3; c++) input[(y * tileWidth + x) * 3 + c] = low + image.pixels[((py0 + y) * image.width + px0 + x) * 3 + c]! * span;
        const result = tf.tidy(() => (this.model.predict(tf.tensor4d(input, [1, tileHeight, tileWidth, 3])) as Tensor).dataSync());
        const resultWidth = tileWidth * scale;
        for (let y = (y0 - py0) * scale; y < (y1 - py0) * scale; y++) {
          for (let x = (x0 - px0) * scale; x < (x1 - px0) * scale; x++) {
            const target = ((py0 * scale + y) * outWidth + px0 * scale + x) * 3;
            for (let c = 0; c < 3; c++) out[target + c] = Math.round(Math.min(255, Math.max(0, (result[(y * resultWidth + x) * 3 + c]! - low) / span)));
          }
        }
        await run.onTile?.(++done, total);
      }
    }
    return { pixels: out, width: outWidth, height: image.height * scale };
  }

  dispose(): void {
    this.model.dispose();
  }
}
