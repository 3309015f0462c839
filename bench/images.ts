/**
 * `npm run bench:images`: image work measured side by side in one run, so the machine's speed
 * cancels out. (1) ESRGAN x2 upscaling throughput through POST /v1/images/upscale against the
 * engine called directly on the same image; (2) the Stable Diffusion pipeline's time per
 * denoising step against bare onnxruntime-node runs of the same UNet session with the same inputs;
 * (3) the companion's event loop while image work runs: the slowest GET /health (asked from a
 * separate thread, every 10 ms) during a 512x512 x2 ESRGAN upscale and during a generation, with
 * the engine run inline on the main thread (as Hearth did before its engine thread) against the
 * routes, which run it in the engine thread.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { buildApp } from '../companion/src/app.js';
import { decodeRgb } from '../companion/src/images/image-io.js';
import { SdPipeline } from '../companion/src/images/sd/pipeline.js';
import { inspectSdFolder } from '../companion/src/images/sd/sd-folder.js';
import { EsrganModel, esrganPackages } from '../companion/src/images/upscale/esrgan.js';
import { silentLogger } from '../companion/src/logger.js';
import { createServices } from '../companion/src/services.js';
import { writeTinyStableDiffusion } from '../scripts/onnx/tiny-sd.js';
import { samplePng } from '../tests/helpers/images.js';
import { healthDuring } from './images/health.js';

const ROUNDS = 5;
const dataDir = join(tmpdir(), 'hearth-bench-images');
rmSync(dataDir, { recursive: true, force: true });
mkdirSync(join(dataDir, 'models'), { recursive: true });
// One ONNX Runtime thread, as the pipelines run directly below use.
writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  threads: 1\n');
const best = (values: number[]) => Math.min(...values);
const print = (line: string) => process.stdout.write(`${line}\n`);

print(
  `Hearth image benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);

// ---- (1) ESRGAN x2: route vs engine ----
const png = await samplePng(128, 96);
const image = await decodeRgb(png);
const outputMegapixels = (image.width * 2 * image.height * 2) / 1e6;
const slim = esrganPackages().find((source) => source.id === 'esrgan-slim');
if (!slim) throw new Error('@upscalerjs/esrgan-slim is not installed.');
const loads: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const started = performance.now();
  (await EsrganModel.load(slim, 2)).dispose();
  loads.push(performance.now() - started);
}
const engine = await EsrganModel.load(slim, 2);
await engine.upscale(image);
const direct: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const started = performance.now();
  await engine.upscale(image);
  direct.push(performance.now() - started);
}
engine.dispose();

const services = await createServices({ dataDir, externalSources: false, log: silentLogger, version: 'bench' });
const app = await buildApp({ services, webRoot: '/nonexistent' });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const upscale = async () => {
  const form = new FormData();
  form.set('model', 'esrgan-slim');
  form.set('scale', '2');
  form.set('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'bench.png');
  const started = performance.now();
  const response = await fetch(`${url}/v1/images/upscale`, { method: 'POST', body: form });
  if (!response.ok) throw new Error(`upscale failed: ${response.status} ${await response.text()}`);
  await response.json();
  return performance.now() - started;
};
await upscale();
const routed: number[] = [];
for (let round = 0; round < ROUNDS; round++) routed.push(await upscale());
const rate = (ms: number) => outputMegapixels / (ms / 1000);
print(`\nESRGAN-slim x2, ${image.width}x${image.height} -> ${image.width * 2}x${image.height * 2} (best of ${ROUNDS})`);
print(`| path | ms | output MP/s |`);
print(`|---|---|---|`);
print(`| engine (EsrganModel.upscale, RGB in and out) | ${best(direct).toFixed(0)} | ${rate(best(direct)).toFixed(3)} |`);
print(`| POST /v1/images/upscale (PNG upload, job, PNG saved, b64 answer) | ${best(routed).toFixed(0)} | ${rate(best(routed)).toFixed(3)} |`);
print(`| ratio route / engine (throughput) | | ${(best(direct) / best(routed)).toFixed(3)} |`);
print(`| of which: loading the model, done once per job (or run of queued jobs) | ${best(loads).toFixed(0)} | |`);
print(`| ratio route / (engine + load) | | ${((best(direct) + best(loads)) / best(routed)).toFixed(3)} |`);

// ---- (2) SD pipeline overhead per step vs bare ONNX Runtime ----
const STEPS = 20;
const folder = writeTinyStableDiffusion(join(dataDir, 'models', 'bench-sd'), { unetWidth: 32, unetLayers: 4, sampleSize: 32 });
const layout = inspectSdFolder(folder).layout!;
const pipeline = await SdPipeline.load(layout, 1);
const perStep: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const stamps: number[] = [];
  await pipeline.run({
    prompt: 'a photo of a cat',
    negativePrompt: 'blurry',
    width: 256,
    height: 256,
    steps: STEPS,
    guidance: 7.5,
    seed: round,
    onStep: () => void stamps.push(performance.now()),
  });
  // Mean time between step callbacks (the first interval includes nothing but step 2).
  perStep.push((stamps.at(-1)! - stamps[0]!) / (stamps.length - 1));
}
const latentSide = 256 / layout.vaeScale;
const sample = new Float32Array(2 * layout.latentChannels * latentSide * latentSide).map(() => Math.random());
const feeds = {
  sample: new ort.Tensor('float32', sample, [2, layout.latentChannels, latentSide, latentSide]),
  timestep: new ort.Tensor('int64', BigInt64Array.from([500n]), [1]),
  encoder_hidden_states: new ort.Tensor('float32', new Float32Array(2 * 16 * 8).fill(0.1), [2, 16, 8]),
};
const bare: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const started = performance.now();
  for (let step = 0; step < STEPS; step++) await pipeline.unetSession.run(feeds);
  bare.push((performance.now() - started) / STEPS);
}
await pipeline.release();
print(`\nStable Diffusion pipeline, generated UNet (32 wide, 4 layers), 256x256, guidance on (batch 2), ${STEPS} steps, 1 thread (best of ${ROUNDS})`);
print(`| per denoising step | ms |`);
print(`|---|---|`);
print(`| bare session.run() on the same UNet session and inputs | ${best(bare).toFixed(2)} |`);
print(`| pipeline step (scale input, guidance, sampler, callbacks) | ${best(perStep).toFixed(2)} |`);
print(`| overhead | ${(best(perStep) - best(bare)).toFixed(2)} ms (${((best(perStep) / best(bare) - 1) * 100).toFixed(1)}%) |`);

// ---- (3) the event loop during image work: inline engine (before) vs the engine thread ----
// The machine's own noise: /health while nothing runs, for as long as a short job.
const idle = await healthDuring(url, () => new Promise((resolve) => setTimeout(resolve, 3000)));
const bigPng = await samplePng(512, 512);
const bigImage = await decodeRgb(bigPng);
const inlineUpscale = await healthDuring(url, async () => {
  const model = await EsrganModel.load(slim, 2);
  await model.upscale(bigImage);
  model.dispose();
});
const threadUpscale = await healthDuring(url, async () => {
  const form = new FormData();
  form.set('model', 'esrgan-slim');
  form.set('scale', '2');
  form.set('image', new Blob([new Uint8Array(bigPng)], { type: 'image/png' }), 'bench.png');
  const response = await fetch(`${url}/v1/images/upscale`, { method: 'POST', body: form });
  if (!response.ok) throw new Error(`upscale failed: ${response.status} ${await response.text()}`);
  await response.json();
});
// A UNet heavy enough that one step is a noticeable stretch of work (about 0.25 s at 512x512 here).
const heavyFolder = writeTinyStableDiffusion(join(dataDir, 'models', 'bench-heavy'), { unetWidth: 128, unetLayers: 16, sampleSize: 64 });
const heavyLayout = inspectSdFolder(heavyFolder).layout!;
const HEAVY_STEPS = 4;
const generation = { prompt: 'a photo of a cat', width: 512, height: 512, steps: HEAVY_STEPS, guidance: 1, seed: 1 };
const inlineDiffusion = await healthDuring(url, async () => {
  const inline = await SdPipeline.load(heavyLayout, 1);
  await inline.run(generation);
  await inline.release();
});
const threadDiffusion = await healthDuring(url, async () => {
  const response = await fetch(`${url}/v1/images/generations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench-heavy', prompt: generation.prompt, size: '512x512', steps: HEAVY_STEPS, guidance: 1, seed: 1 }),
  });
  if (!response.ok) throw new Error(`generation failed: ${response.status} ${await response.text()}`);
  await response.json();
});
await app.close();
await services.close();
print(`\nThe event loop during image work: GET /health every 10 ms from another thread (model load included in each run)`);
print(`| work | where the engine runs | run ms | /health answers | slowest /health ms |`);
print(`|---|---|---|---|---|`);
const row = (work: string, where: string, result: Awaited<ReturnType<typeof healthDuring>>) =>
  print(`| ${work} | ${where} | ${result.ms.toFixed(0)} | ${result.answers} | ${result.slowest.toFixed(0)} |`);
row('nothing (the noise floor)', '', idle);
row('ESRGAN-slim x2, 512x512 -> 1024x1024', 'inline on the main thread (before)', inlineUpscale);
row('ESRGAN-slim x2, 512x512 -> 1024x1024', 'engine thread (POST /v1/images/upscale)', threadUpscale);
row(`SD (generated UNet, 128 wide, 16 layers) 512x512, ${HEAVY_STEPS} steps`, 'inline on the main thread (before)', inlineDiffusion);
row(`SD (generated UNet, 128 wide, 16 layers) 512x512, ${HEAVY_STEPS} steps`, 'engine thread (POST /v1/images/generations)', threadDiffusion);
print(`| ratio slowest /health, inline / thread | upscale | | | ${(inlineUpscale.slowest / threadUpscale.slowest).toFixed(1)} |`);
print(`| ratio slowest /health, inline / thread | generation | | | ${(inlineDiffusion.slowest / threadDiffusion.slowest).toFixed(1)} |`);
rmSync(dataDir, { recursive: true, force: true });
