import { parseArgs } from 'node:util';
import { writeTinyStableDiffusion, type TinyScheduler } from './onnx/tiny-sd.js';

const usage = `Usage: tsx scripts/model-tiny-sd.ts OUT_FOLDER [--scheduler EulerAncestralDiscreteScheduler|EulerDiscreteScheduler|LCMScheduler] [--inpainting]
Writes a tiny random-weight Stable Diffusion folder in the ONNX export layout (for tests and benchmarks).`;

const { positionals, values } = parseArgs({ allowPositionals: true, options: { scheduler: { type: 'string' }, inpainting: { type: 'boolean' } } });
if (positionals.length !== 1) {
  console.error(usage);
  process.exit(2);
}
const dir = writeTinyStableDiffusion(positionals[0]!, { scheduler: values.scheduler as TinyScheduler | undefined, inpainting: values.inpainting });
console.log(`${dir}: a tiny Stable Diffusion pipeline (random weights; the pictures are noise)`);
