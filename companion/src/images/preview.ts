/**
 * Cheap previews of latents while a model denoises: a fixed linear map from SD's four latent
 * channels to RGB (other channel counts show their first three channels, normalised). Previews
 * are sent to the client only; they are never stored as a result.
 */
import { encodePng } from './image-io.js';

/** Stable Diffusion 1.x/2.x latent channel -> RGB contributions. */
const SD_FACTORS = [
  [0.3512, 0.2297, 0.3227],
  [0.325, 0.4974, 0.235],
  [-0.2829, 0.1762, 0.2721],
  [-0.212, -0.2616, -0.7177],
];

export async function latentPreview(latents: Float32Array, channels: number, width: number, height: number): Promise<Buffer> {
  const cells = width * height;
  const pixels = new Uint8Array(cells * 3);
  if (channels === 4) {
    for (let p = 0; p < cells; p++)
      for (let c = 0; c < 3; c++) {
        let value = 0;
        for (let k = 0; k < 4; k++) value += latents[k * cells + p]! * SD_FACTORS[k]![c]!;
        pixels[p * 3 + c] = Math.round(Math.min(1, Math.max(0, (value + 1) / 2)) * 255);
      }
  } else {
    for (let c = 0; c < 3; c++) {
      const plane = latents.subarray((c % channels) * cells, (c % channels) * cells + cells);
      let low = Infinity;
      let high = -Infinity;
      for (const value of plane) {
        low = Math.min(low, value);
        high = Math.max(high, value);
      }
      const span = high - low || 1;
      for (let p = 0; p < cells; p++) pixels[p * 3 + c] = Math.round(((plane[p]! - low) / span) * 255);
    }
  }
  return encodePng({ pixels, width, height });
}
