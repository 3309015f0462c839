/**
 * The image engine thread. It owns one loaded engine (an ESRGAN model on TensorFlow.js's
 * WebAssembly backend, or a Stable Diffusion pipeline on ONNX Runtime), whose runs are long and
 * synchronous (a tile's predict, a UNet step), so they never hold up the companion's event loop.
 * One request at a time. Between two tiles or steps the run reads the shared stop flag, so a
 * cancel takes effect within one tile or step while the engine stays loaded for the next job.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SdPipeline } from '../sd/pipeline.js';
import type { EsrganModel } from '../upscale/esrgan.js';
import type { EngineReply, EngineRequest, EngineSpec } from './messages.js';

const port = parentPort!;
const flag = (workerData as { stop: Int32Array }).stop;

class Stopped extends Error {}

/** What the engines check between tiles and steps (an AbortSignal's one method). */
const stop = {
  throwIfAborted(): void {
    if (Atomics.load(flag, 0) !== 0) throw new Stopped('stopped');
  },
};

let engine: { kind: 'esrgan'; model: EsrganModel } | { kind: 'sd'; pipeline: SdPipeline } | undefined;

const reply = (message: EngineReply, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

async function load(spec: EngineSpec): Promise<void> {
  if (engine) throw new Error('The image engine thread already holds an engine.');
  if (spec.kind === 'esrgan') {
    const { EsrganModel } = await import('../upscale/esrgan.js');
    engine = { kind: 'esrgan', model: await EsrganModel.load(spec.source, spec.scale) };
  } else {
    const { SdPipeline } = await import('../sd/pipeline.js');
    engine = { kind: 'sd', pipeline: await SdPipeline.load(spec.layout, spec.threads) };
  }
}

async function handle(request: EngineRequest): Promise<void> {
  const { id } = request;
  if (request.type === 'load') {
    await load(request.spec);
    return reply({ id, type: 'done' });
  }
  if (request.type === 'release') {
    if (engine?.kind === 'sd') await engine.pipeline.release();
    else engine?.model.dispose();
    engine = undefined;
    return reply({ id, type: 'done' });
  }
  if (request.type === 'upscale') {
    if (engine?.kind !== 'esrgan') throw new Error('No upscaler is loaded in the image engine thread.');
    const image = await engine.model.upscale(request.image, { signal: stop, onTile: (done, total) => reply({ id, type: 'tile', done, total }) });
    return reply({ id, type: 'done', image }, [image.pixels.buffer as ArrayBuffer]);
  }
  if (engine?.kind !== 'sd') throw new Error('No Stable Diffusion model is loaded in the image engine thread.');
  const result = await engine.pipeline.run({
    ...request.job,
    signal: stop,
    onStep: (step) => reply({ id, type: 'step', ...step }),
  });
  const image = { pixels: result.pixels, width: request.job.width, height: request.job.height };
  return reply({ id, type: 'done', image, steps: result.steps }, [image.pixels.buffer as ArrayBuffer]);
}

port.on('message', (request: EngineRequest) => {
  handle(request).catch((error: unknown) =>
    reply({ id: request.id, type: 'error', message: error instanceof Error ? error.message : String(error), stopped: error instanceof Stopped }),
  );
});
