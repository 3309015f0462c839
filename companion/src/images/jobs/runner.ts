/** Executes one planned image job on its engine, reporting stages, steps and previews. */
import sharp from 'sharp';
import { HearthError } from '../../errors.js';
import type { ProviderClient } from '../../providers/client.js';
import { MAX_ANSWER_BYTES, readPrefix } from '../../providers/read-body.js';
import { encodePng, MAX_INPUT_PIXELS } from '../image-io.js';
import type { LoadedImageEngines } from '../loaded-engines.js';
import { latentPreview } from '../preview.js';
import type { JobPlan } from '../requests.js';
import { lanczosUpscale } from '../upscale/lanczos.js';

export interface RunContext {
  signal: AbortSignal;
  engines: LoadedImageEngines;
  providers: ProviderClient;
  stage(stage: 'generating'): void;
  notice(text: string): void;
  progress(step: number, steps: number): void;
  /** Present when the caller wants previews (a stream). */
  preview?(step: number, png: Buffer, width: number, height: number): void;
}

export interface RunOutput {
  png: Buffer;
  width: number;
  height: number;
  seed: number | null;
}

export async function runPlan(plan: JobPlan, context: RunContext): Promise<RunOutput[]> {
  if (plan.kind === 'sd') return runDiffusion(plan, context);
  if (plan.kind === 'upscale') return [await runUpscale(plan, context)];
  return runProvider(plan, context);
}

async function runDiffusion(plan: Extract<JobPlan, { kind: 'sd' }>, context: RunContext): Promise<RunOutput[]> {
  const engine = await context.engines.acquire(plan.model, plan.width * plan.height, context.notice, { signal: context.signal });
  context.stage('generating');
  const total = plan.n * plan.stepsPerImage;
  const every = Math.max(1, Math.floor(plan.stepsPerImage / 10));
  const outputs: RunOutput[] = [];
  for (let index = 0; index < plan.n; index++) {
    const seed = (plan.seed + index) >>> 0;
    const job = {
      prompt: plan.prompt,
      negativePrompt: plan.negativePrompt,
      width: plan.width,
      height: plan.height,
      steps: plan.steps,
      guidance: plan.guidance,
      seed,
      source: plan.source,
      mask: plan.mask,
      strength: plan.strength,
    };
    const result = await engine.diffuse(job, {
      signal: context.signal,
      onStep: (step) => {
        const done = index * plan.stepsPerImage + step.step;
        context.progress(done, total);
        if (context.preview && step.step < step.steps && step.step % every === 0) {
          const preview = context.preview;
          latentPreview(step.latents, step.channels, step.latentWidth, step.latentHeight).then(
            (png) => preview(done, png, step.latentWidth, step.latentHeight),
            () => undefined,
          );
        }
      },
    });
    outputs.push({ png: await encodePng({ pixels: result.pixels, width: plan.width, height: plan.height }), width: plan.width, height: plan.height, seed });
  }
  return outputs;
}

async function runUpscale(plan: Extract<JobPlan, { kind: 'upscale' }>, context: RunContext): Promise<RunOutput> {
  if (plan.model.engine === 'lanczos') {
    context.stage('generating');
    const image = await lanczosUpscale(plan.image, plan.scale);
    context.progress(1, 1);
    return { png: await encodePng(image), width: image.width, height: image.height, seed: null };
  }
  const outPixels = plan.image.width * plan.image.height * plan.scale * plan.scale;
  const engine = await context.engines.acquire(plan.model, outPixels, context.notice, { scale: plan.scale, signal: context.signal });
  context.stage('generating');
  const image = await engine.upscale(plan.image, { signal: context.signal, onTile: (done, total) => context.progress(done, total) });
  return { png: await encodePng(image), width: image.width, height: image.height, seed: null };
}

/** An OpenAI-Images-compatible server: asked for base64 images, which are stored like local results. */
async function runProvider(plan: Extract<JobPlan, { kind: 'provider' }>, context: RunContext): Promise<RunOutput[]> {
  context.stage('generating');
  let body: Record<string, unknown> | FormData;
  if (plan.operation === 'generate') {
    body = { prompt: plan.prompt, n: plan.n, response_format: 'b64_json', ...(plan.size ? { size: plan.size } : {}) };
  } else {
    const form = new FormData();
    const files = plan.files!;
    const field = files.images.length > 1 ? 'image[]' : 'image';
    files.images.forEach((bytes, index) => form.append(field, blob(bytes), `image-${index}.png`));
    if (files.mask) form.append('mask', blob(files.mask), 'mask.png');
    form.set('prompt', plan.prompt);
    form.set('n', String(plan.n));
    form.set('response_format', 'b64_json');
    if (plan.size) form.set('size', plan.size);
    body = form;
  }
  const path = plan.operation === 'generate' ? '/images/generations' : '/images/edits';
  const answer = (await context.providers.images(path, plan.model.id, body, context.signal)) as { data?: { b64_json?: unknown; url?: unknown }[] };
  if (!Array.isArray(answer?.data) || answer.data.length === 0) {
    throw new HearthError('provider_error', `Provider "${plan.model.provider}" answered ${path} without images.`);
  }
  const outputs: RunOutput[] = [];
  for (const item of answer.data) {
    const bytes = await providerImageBytes(item, plan.model.provider, context.signal);
    try {
      const { data, info } = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).png().toBuffer({ resolveWithObject: true });
      outputs.push({ png: data, width: info.width, height: info.height, seed: null });
    } catch {
      throw new HearthError('provider_error', `Provider "${plan.model.provider}" sent an image Hearth cannot read.`);
    }
    context.progress(outputs.length, answer.data.length);
  }
  return outputs;
}

const blob = (bytes: Uint8Array) => new Blob([bytes as Uint8Array<ArrayBuffer>]);

async function providerImageBytes(item: { b64_json?: unknown; url?: unknown }, provider: string, signal: AbortSignal): Promise<Buffer> {
  if (typeof item.b64_json === 'string') return Buffer.from(item.b64_json, 'base64');
  if (typeof item.url === 'string' && /^https?:\/\//.test(item.url)) {
    // The provider chose to answer with a link; it is fetched without credentials.
    const response = await fetch(item.url, { signal, redirect: 'error' });
    if (!response.ok) throw new HearthError('provider_error', `Provider "${provider}" gave an image link that answered HTTP ${response.status}.`);
    const { bytes, whole } = await readPrefix(response.body, MAX_ANSWER_BYTES);
    if (!whole) throw new HearthError('provider_error', `Provider "${provider}" gave an image link to a file larger than 64 MiB.`);
    return bytes;
  }
  throw new HearthError('provider_error', `Provider "${provider}" answered with an image entry that has neither b64_json nor url.`);
}
