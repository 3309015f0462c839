/**
 * The Stable Diffusion pipeline end to end on tiny generated ONNX graphs with the export's own
 * input/output names, types and dynamic axes: text to image, image to image with strength,
 * inpainting (mask on any model; an inpainting UNet), seeds, negative prompts, samplers.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { encodePng } from '../../../companion/src/images/image-io.js';
import { SdPipeline, type SdRunRequest } from '../../../companion/src/images/sd/pipeline.js';
import { inspectSdFolder } from '../../../companion/src/images/sd/sd-folder.js';
import { writeTinyStableDiffusion, type TinySdOptions } from '../../../scripts/onnx/tiny-sd.js';

const root = mkdtempSync(join(tmpdir(), 'hearth-sd-'));
const loaded: SdPipeline[] = [];

async function pipeline(name: string, options: TinySdOptions = {}): Promise<SdPipeline> {
  const inspection = inspectSdFolder(writeTinyStableDiffusion(join(root, name), options));
  expect(inspection.error).toBeUndefined();
  const pipe = await SdPipeline.load(inspection.layout!, 1);
  loaded.push(pipe);
  return pipe;
}

afterAll(async () => {
  for (const pipe of loaded) await pipe.release();
});

const base: SdRunRequest = { prompt: 'a photo of a cat', width: 64, height: 48, steps: 6, guidance: 7.5, seed: 1234 };
const differs = (a: Uint8Array, b: Uint8Array) => a.some((value, i) => value !== b[i]);

describe('text to image', () => {
  it('writes a PNG of the requested size, reproducible from its seed', async () => {
    const pipe = await pipeline('euler-a');
    const steps: number[] = [];
    const first = await pipe.run({ ...base, onStep: (step) => void steps.push(step.step) });
    expect(steps).toEqual([1, 2, 3, 4, 5, 6]);
    expect(first.pixels).toHaveLength(64 * 48 * 3);
    const png = await encodePng({ pixels: first.pixels, width: 64, height: 48 });
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 64, height: 48 });
    expect((await pipe.run(base)).pixels).toEqual(first.pixels);
    expect(differs((await pipe.run({ ...base, seed: 1235 })).pixels, first.pixels)).toBe(true);
    expect(differs((await pipe.run({ ...base, prompt: 'a red house' })).pixels, first.pixels)).toBe(true);
  });

  it('uses the negative prompt as the unconditional text under guidance, and ignores it without', async () => {
    const pipe = await pipeline('negative');
    const plain = await pipe.run(base);
    expect(differs((await pipe.run({ ...base, negativePrompt: 'blurry ugly' })).pixels, plain.pixels)).toBe(true);
    const unguided = { ...base, guidance: 1 };
    expect((await pipe.run({ ...unguided, negativePrompt: 'blurry ugly' })).pixels).toEqual((await pipe.run(unguided)).pixels);
  });

  it('reads latent channels and sizes from the configs, and takes float timesteps', async () => {
    const pipe = await pipeline('six-channels', { latentChannels: 6, timestepType: 'float' });
    expect(pipe.layout.latentChannels).toBe(6);
    const seen: number[] = [];
    const result = await pipe.run({ ...base, onStep: (step) => void seen.push(step.channels * step.latentWidth * step.latentHeight) });
    expect(seen[0]).toBe(6 * 8 * 6);
    expect(result.pixels).toHaveLength(64 * 48 * 3);
  });

  it("samples in one step with SD-Turbo's Euler and with LCM (guidance as timestep_cond)", async () => {
    const turbo = await pipeline('turbo', { scheduler: 'EulerDiscreteScheduler' });
    expect((await turbo.run({ ...base, steps: 1, guidance: 0 })).steps).toBe(1);
    const lcm = await pipeline('lcm', { scheduler: 'LCMScheduler', timeCondDim: 16 });
    const one = await lcm.run({ ...base, steps: 1, guidance: 1.5 });
    expect(one.steps).toBe(1);
    expect(differs((await lcm.run({ ...base, steps: 1, guidance: 8 })).pixels, one.pixels)).toBe(true);
  });
});

describe('editing', () => {
  it('runs the last strength × steps steps from the encoded source', async () => {
    const pipe = await pipeline('img2img');
    const source = (await pipe.run(base)).pixels;
    const light = await pipe.run({ ...base, prompt: 'a red house', source, strength: 0.5, steps: 10 });
    expect(light.steps).toBe(5);
    const strong = await pipe.run({ ...base, prompt: 'a red house', source, strength: 1, steps: 10 });
    expect(strong.steps).toBe(10);
    expect(differs(light.pixels, strong.pixels)).toBe(true);
    expect((await pipe.run({ ...base, prompt: 'a red house', source, strength: 0.5, steps: 10 })).pixels).toEqual(light.pixels);
  });

  it('repaints only the masked area: the rest is the source, whatever the prompt and seed', async () => {
    const pipe = await pipeline('inpaint-any');
    const source = (await pipe.run(base)).pixels;
    const mask = new Uint8Array(64 * 48);
    for (let y = 0; y < 48; y++) mask.fill(255, y * 64, y * 64 + 32); // left half repaints
    const a = await pipe.run({ ...base, prompt: 'a dog', seed: 1, source, mask, strength: 1 });
    const b = await pipe.run({ ...base, prompt: 'the fire', seed: 2, source, mask, strength: 1 });
    const half = (pixels: Uint8Array, right: boolean) => pixels.filter((_, i) => Math.floor(i / 3) % 64 >= 32 === right);
    expect(half(a.pixels, true)).toEqual(half(b.pixels, true));
    expect(differs(half(a.pixels, false), half(b.pixels, false))).toBe(true);
  });

  it('feeds an inpainting UNet its mask and masked-image latents', async () => {
    const pipe = await pipeline('inpainting-unet', { inpainting: true });
    expect(pipe.layout.unetInChannels).toBe(9);
    const source = new Uint8Array(64 * 48 * 3).fill(200);
    const mask = new Uint8Array(64 * 48).fill(255, 0, 64 * 24);
    const result = await pipe.run({ ...base, steps: 3, source, mask });
    expect(result.steps).toBe(3);
    expect(differs(result.pixels, (await pipe.run({ ...base, steps: 3, source, mask: new Uint8Array(64 * 48).fill(255) })).pixels)).toBe(true);
  });
});

describe('cancelling', () => {
  it('stops between steps when the signal is aborted', async () => {
    const pipe = await pipeline('cancel');
    const controller = new AbortController();
    const steps: number[] = [];
    const run = pipe.run({
      ...base,
      steps: 20,
      signal: controller.signal,
      onStep: (step) => (steps.push(step.step), step.step === 3 && controller.abort(new Error('stop'))),
    });
    await expect(run).rejects.toThrow('stop');
    expect(steps).toEqual([1, 2, 3]);
  });
});

describe('model folders', () => {
  it('name the missing part of an incomplete folder', () => {
    const inspection = inspectSdFolder(writeTinyStableDiffusion(join(root, 'no-unet'), { omit: ['unet', 'tokenizer'] }));
    expect(inspection.error).toMatch(/unet\/model\.onnx, tokenizer\/vocab\.json, tokenizer\/merges\.txt are missing/);
  });

  it('derive capabilities, defaults and limits', () => {
    const plain = inspectSdFolder(join(root, 'euler-a'));
    expect(plain.capabilities).toMatchObject({ generate: true, edit: true, mask: true, strength: true, negative_prompt: true, upscale: false });
    expect(plain.defaults).toEqual({ size: '64x64', steps: 25, guidance: 7.5 });
    expect(plain.limits).toMatchObject({ size_multiple: 8, steps: [1, 150] });
    const noEncoder = inspectSdFolder(writeTinyStableDiffusion(join(root, 'no-encoder'), { omit: ['vae_encoder'] }));
    expect(noEncoder.capabilities).toMatchObject({ generate: true, edit: false, mask: false });
    expect(inspectSdFolder(join(root, 'turbo')).defaults).toEqual({ size: '64x64', steps: 1, guidance: 0 });
    expect(inspectSdFolder(join(root, 'inpainting-unet')).capabilities).toMatchObject({ generate: false, edit: true, mask: true, strength: false });
  });
});
