/** ESRGAN with the weights shipped in the @upscalerjs packages (TensorFlow.js wasm backend), and Lanczos. */
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRgb, type RgbImage } from '../../../companion/src/images/image-io.js';
import { EsrganModel, esrganPackages } from '../../../companion/src/images/upscale/esrgan.js';
import { lanczosUpscale } from '../../../companion/src/images/upscale/lanczos.js';
import { samplePng } from '../../helpers/images.js';

const meanDifference = (a: Uint8Array, b: Uint8Array) => a.reduce((sum, value, i) => sum + Math.abs(value - b[i]!), 0) / a.length;
const models: EsrganModel[] = [];
afterAll(() => models.forEach((model) => model.dispose()));

async function plainResize(image: RgbImage, scale: number, kernel: 'nearest' | 'cubic'): Promise<Uint8Array> {
  const { data } = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(image.width * scale, image.height * scale, { kernel })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return new Uint8Array(data);
}

describe('ESRGAN', () => {
  it('finds the installed UpscalerJS packages with their scales', () => {
    const found = esrganPackages();
    expect(found.map((source) => source.id)).toEqual(expect.arrayContaining(['esrgan-slim', 'esrgan-medium']));
    const slim = found.find((source) => source.id === 'esrgan-slim')!;
    expect([...slim.files.keys()]).toEqual([2, 3, 4, 8]);
    expect(slim.range).toEqual([0, 255]);
  });

  it('upscales a real PNG x2 and x3 in tiles, to the right size, unlike a plain resize', async () => {
    const slim = esrganPackages().find((source) => source.id === 'esrgan-slim')!;
    const image = await decodeRgb(await samplePng(160, 120));
    const x2 = await EsrganModel.load(slim, 2);
    models.push(x2);
    const tiles: string[] = [];
    const big = await x2.upscale(image, { onTile: (done, total) => void tiles.push(`${done}/${total}`) });
    expect([big.width, big.height]).toEqual([320, 240]);
    expect(tiles).toEqual(['1/2', '2/2']);
    // A learned upscaler: close to a resize overall, but not the same picture.
    const cubic = await plainResize(image, 2, 'cubic');
    expect(meanDifference(big.pixels, cubic)).toBeGreaterThan(1);
    expect(meanDifference(big.pixels, cubic)).toBeLessThan(40);
    expect(meanDifference(big.pixels, await plainResize(image, 2, 'nearest'))).toBeGreaterThan(1);

    const x3 = await EsrganModel.load(slim, 3);
    models.push(x3);
    const third = await x3.upscale(await decodeRgb(await samplePng(40, 30)));
    expect([third.width, third.height]).toEqual([120, 90]);
  });

  it('stops between tiles when cancelled', async () => {
    const controller = new AbortController();
    const model = models[0]!;
    const image = await decodeRgb(await samplePng(300, 140));
    const run = model.upscale(image, { signal: controller.signal, onTile: (done) => void (done === 1 && controller.abort(new Error('cancelled'))) });
    await expect(run).rejects.toThrow('cancelled');
  });
});

describe('Lanczos', () => {
  it('resamples by the factor with lanczos3, smoother than nearest neighbour', async () => {
    const image = await decodeRgb(await samplePng(64, 48));
    const big = await lanczosUpscale(image, 4);
    expect([big.width, big.height]).toEqual([256, 192]);
    expect(meanDifference(big.pixels, await plainResize(image, 4, 'nearest'))).toBeGreaterThan(0.5);
  });
});
