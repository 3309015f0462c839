/**
 * Images checked for a projector before the engine sees them: real images made with sharp, read
 * back with sharp. What passes through, what is converted to PNG, and each refusal naming the part.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import { MAX_IMAGE_BYTES } from '../../../companion/src/generation/image-limits.js';
import { checkedImage, checkedMedia } from '../../../companion/src/generation/media-check.js';
import type { GenerationRequest, MediaPart } from '../../../companion/src/inference/types.js';

const param = 'messages[0].content[1].image_url.url';
const part = (data: Buffer): MediaPart => ({ kind: 'image', data, mime: 'image/*', offset: 0, param });
const picture = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } });

async function refusal(data: Buffer): Promise<HearthError> {
  const error = await checkedImage(part(data)).then(
    () => expect.unreachable('the image should have been refused'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HearthError);
  expect((error as HearthError).code).toBe('invalid_image');
  expect((error as HearthError).param).toBe(param);
  return error as HearthError;
}

describe('images checked for the projector', () => {
  it('passes an upright PNG and JPEG through as they came', async () => {
    const png = await picture(40, 30).png().toBuffer();
    const jpeg = await picture(40, 30).jpeg().toBuffer();
    expect(await checkedImage(part(png))).toMatchObject({ data: png, mime: 'image/png' });
    expect(await checkedImage(part(jpeg))).toMatchObject({ data: jpeg, mime: 'image/jpeg' });
  });

  it('converts WebP, GIF, TIFF and AVIF to PNG at the same size', async () => {
    for (const format of ['webp', 'gif', 'tiff', 'avif'] as const) {
      const checked = await checkedImage(part(await picture(40, 30).toFormat(format).toBuffer()));
      expect(checked.mime, format).toBe('image/png');
      const meta = await sharp(checked.data).metadata();
      expect([meta.format, meta.width, meta.height], format).toEqual(['png', 40, 30]);
    }
  });

  it('turns a JPEG upright by its EXIF orientation', async () => {
    const sideways = await picture(40, 30).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const checked = await checkedImage(part(sideways));
    const meta = await sharp(checked.data).metadata();
    expect([meta.format, meta.width, meta.height, meta.orientation]).toEqual(['png', 30, 40, undefined]);
  });

  it('refuses bytes that are no image, a truncated PNG, an SVG, a strip and too many pixels', async () => {
    expect((await refusal(Buffer.from('just some text, not a picture'))).message).toMatch(/is not an image local models here can read/);
    const png = await picture(300, 200).png({ compressionLevel: 0 }).toBuffer();
    expect((await refusal(png.subarray(0, png.length / 2))).message).toMatch(/damaged or truncated/);
    expect((await refusal(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"></svg>'))).message).toMatch(/is an SVG/);
    expect((await refusal(await picture(1, 100_000).png().toBuffer())).message).toMatch(/1×100000: one side is more than 20 times the other/);
    expect((await refusal(await picture(8000, 6000).png().toBuffer())).message).toMatch(/more than 40,000,000 pixels/);
  });

  it('refuses an image over the byte limit before decoding it', async () => {
    expect((await refusal(Buffer.alloc(MAX_IMAGE_BYTES + 1))).message).toMatch(/more than 20 MB/);
  });

  it('checks every image of a request and leaves a request without images as it is', async () => {
    const request = { history: [{ role: 'user', text: 'hi' }] } as GenerationRequest;
    expect(await checkedMedia(request)).toBe(request);
    const webp = await picture(16, 16).webp().toBuffer();
    const checked = await checkedMedia({ history: [{ role: 'user', text: 'two', media: [part(webp), part(webp)] }] } as GenerationRequest);
    expect(checked.history[0]).toMatchObject({ media: [{ mime: 'image/png' }, { mime: 'image/png' }] });
  });
});
