/** What the companion and its image engine thread say to each other (structured-cloned messages). */
import type { RgbImage } from '../image-io.js';
import type { SdRunRequest, SdStep } from '../sd/pipeline.js';
import type { SdLayout } from '../sd/sd-folder.js';
import type { EsrganSource } from '../upscale/esrgan.js';

/** A Stable Diffusion run as data: the request without its callbacks. */
export type DiffusionJob = Omit<SdRunRequest, 'signal' | 'onStep'>;

export type EngineSpec = { kind: 'esrgan'; source: EsrganSource; scale: number } | { kind: 'sd'; layout: SdLayout; threads: number };

export type EngineRequest =
  | { id: number; type: 'load'; spec: EngineSpec }
  | { id: number; type: 'upscale'; image: RgbImage }
  | { id: number; type: 'diffuse'; job: DiffusionJob }
  | { id: number; type: 'release' };

export type EngineReply =
  | { id: number; type: 'tile'; done: number; total: number }
  | ({ id: number; type: 'step' } & SdStep)
  | { id: number; type: 'done'; image?: RgbImage; steps?: number }
  /** `stopped`: the run saw the stop flag between two tiles or steps. */
  | { id: number; type: 'error'; message: string; stopped: boolean };
