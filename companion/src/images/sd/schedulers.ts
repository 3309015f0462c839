/**
 * Samplers of the denoising loop, after diffusers' EulerAncestralDiscreteScheduler,
 * EulerDiscreteScheduler (what SD-Turbo ships, for one-step sampling) and LCMScheduler, driven
 * by the model's scheduler/scheduler_config.json. Tensors are flat Float32Arrays.
 */

export interface SchedulerConfig {
  _class_name?: string;
  num_train_timesteps?: number;
  beta_start?: number;
  beta_end?: number;
  beta_schedule?: string;
  trained_betas?: number[];
  prediction_type?: string;
  timestep_spacing?: string;
  steps_offset?: number;
  original_inference_steps?: number;
  timestep_scaling?: number;
}

export type SamplerKind = 'euler_a' | 'euler' | 'lcm';

/** One planned sampling run: its timesteps and how to advance latents through them. */
export interface Sampler {
  kind: SamplerKind;
  /** Timesteps fed to the UNet, in order. */
  timesteps: number[];
  /** Standard deviation to scale pure noise by before the first step. */
  initNoiseSigma: number;
  /** Scales the UNet's input at step `index` (in place is not allowed: returns a new array). */
  scaleInput(sample: Float32Array, index: number): Float32Array;
  /** Latents after step `index` from the UNet's output; `noise` draws fresh noise where the sampler adds some. */
  step(output: Float32Array, index: number, sample: Float32Array, noise: () => Float32Array): Float32Array;
  /** `original` noised to the level the latents have before step `index` (index = timesteps.length: none). */
  addNoise(original: Float32Array, noise: Float32Array, index: number): Float32Array;
}

export function samplerKind(config: SchedulerConfig): SamplerKind {
  if (config._class_name === 'LCMScheduler') return 'lcm';
  if (config._class_name === 'EulerDiscreteScheduler') return 'euler';
  // Ancestral Euler works with any epsilon- or v-predicting SD model's noise schedule (PNDM, DDIM, LMS configs alike).
  return 'euler_a';
}

function alphasCumprod(config: SchedulerConfig): Float64Array {
  const count = config.num_train_timesteps ?? 1000;
  const start = config.beta_start ?? 0.00085;
  const end = config.beta_end ?? 0.012;
  const betas = new Float64Array(count);
  if (config.trained_betas?.length === count) betas.set(config.trained_betas);
  else if (config.beta_schedule === 'linear') for (let i = 0; i < count; i++) betas[i] = start + ((end - start) * i) / (count - 1);
  else
    for (let i = 0; i < count; i++) {
      const root = Math.sqrt(start) + ((Math.sqrt(end) - Math.sqrt(start)) * i) / (count - 1);
      betas[i] = root * root;
    }
  const cumulative = new Float64Array(count);
  let product = 1;
  for (let i = 0; i < count; i++) cumulative[i] = product *= 1 - betas[i]!;
  return cumulative;
}

/** Timesteps by the config's spacing ("linspace", "leading", "trailing"), highest first. */
function spacedTimesteps(config: SchedulerConfig, steps: number): number[] {
  const train = config.num_train_timesteps ?? 1000;
  const spacing = config.timestep_spacing ?? 'linspace';
  if (spacing === 'leading') {
    const ratio = Math.floor(train / steps);
    return Array.from({ length: steps }, (_, i) => Math.round(i * ratio) + (config.steps_offset ?? 0)).reverse();
  }
  if (spacing === 'trailing') {
    const ratio = train / steps;
    return Array.from({ length: steps }, (_, i) => Math.round(train - i * ratio) - 1);
  }
  if (steps === 1) return [train - 1];
  return Array.from({ length: steps }, (_, i) => ((train - 1) * (steps - 1 - i)) / (steps - 1));
}

function interpolate(values: Float64Array, at: number): number {
  const low = Math.max(0, Math.min(values.length - 1, Math.floor(at)));
  const high = Math.min(values.length - 1, low + 1);
  const weight = at - low;
  return values[low]! * (1 - weight) + values[high]! * weight;
}

const map = (a: Float32Array, f: (value: number, index: number) => number) => {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = f(a[i]!, i);
  return out;
};

/**
 * A sampler for `steps` steps. With `strength` < 1 (image-to-image), only the last
 * round(steps * strength) steps run, starting from the source noised to that level.
 */
export function createSampler(config: SchedulerConfig, steps: number, strength = 1): Sampler {
  const kind = samplerKind(config);
  return kind === 'lcm' ? lcmSampler(config, steps, strength) : eulerSampler(config, steps, strength, kind);
}

function eulerSampler(config: SchedulerConfig, steps: number, strength: number, kind: 'euler' | 'euler_a'): Sampler {
  const cumulative = alphasCumprod(config);
  const trainSigmas = cumulative.map((alpha) => Math.sqrt((1 - alpha) / alpha));
  const all = spacedTimesteps(config, steps);
  const allSigmas = [...all.map((t) => interpolate(trainSigmas, t)), 0];
  const start = Math.max(steps - Math.min(Math.floor(steps * strength), steps), 0);
  const timesteps = all.slice(start);
  const sigmas = allSigmas.slice(start);
  const max = Math.max(...allSigmas);
  const spacing = config.timestep_spacing ?? 'linspace';
  const vPrediction = config.prediction_type === 'v_prediction';
  return {
    kind,
    timesteps,
    initNoiseSigma: spacing === 'linspace' || spacing === 'trailing' ? max : Math.sqrt(max * max + 1),
    scaleInput: (sample, index) => {
      const divisor = Math.sqrt(sigmas[index]! ** 2 + 1);
      return map(sample, (value) => value / divisor);
    },
    step: (output, index, sample, noise) => {
      const sigma = sigmas[index]!;
      const next = sigmas[index + 1]!;
      const c = Math.sqrt(sigma * sigma + 1);
      const original = (i: number) => (vPrediction ? output[i]! * (-sigma / c) + sample[i]! / (sigma * sigma + 1) : sample[i]! - sigma * output[i]!);
      if (kind === 'euler') return map(sample, (value, i) => value + ((value - original(i)) / sigma) * (next - sigma));
      const up = Math.sqrt((next * next * (sigma * sigma - next * next)) / (sigma * sigma));
      const down = Math.sqrt(next * next - up * up);
      const fresh = up > 0 ? noise() : undefined;
      return map(sample, (value, i) => value + ((value - original(i)) / sigma) * (down - sigma) + (fresh ? fresh[i]! * up : 0));
    },
    addNoise: (original, noise, index) => {
      const sigma = sigmas[index] ?? 0;
      return map(original, (value, i) => value + noise[i]! * sigma);
    },
  };
}

function lcmSampler(config: SchedulerConfig, steps: number, strength: number): Sampler {
  const cumulative = alphasCumprod(config);
  const train = config.num_train_timesteps ?? 1000;
  const originalSteps = Math.max(config.original_inference_steps ?? 50, steps);
  const k = Math.floor(train / originalSteps);
  const count = Math.max(1, Math.floor(originalSteps * strength));
  const origin = Array.from({ length: count }, (_, i) => (i + 1) * k - 1).reverse();
  const taken = Math.min(steps, origin.length);
  const timesteps = Array.from({ length: taken }, (_, i) => origin[Math.floor((i * origin.length) / taken)]!);
  const scaling = config.timestep_scaling ?? 10;
  const vPrediction = config.prediction_type === 'v_prediction';
  const alphaAt = (t: number) => (t >= 0 ? cumulative[t]! : 1);
  return {
    kind: 'lcm',
    timesteps,
    initNoiseSigma: 1,
    scaleInput: (sample) => sample,
    step: (output, index, sample, noise) => {
      const t = timesteps[index]!;
      const previous = index + 1 < timesteps.length ? timesteps[index + 1]! : t;
      const alpha = alphaAt(t);
      const alphaPrevious = alphaAt(previous);
      const scaled = t * scaling;
      const skip = 0.25 / (scaled * scaled + 0.25);
      const out = scaled / Math.sqrt(scaled * scaled + 0.25);
      const denoised = map(sample, (value, i) => {
        const x0 = vPrediction ? Math.sqrt(alpha) * value - Math.sqrt(1 - alpha) * output[i]! : (value - Math.sqrt(1 - alpha) * output[i]!) / Math.sqrt(alpha);
        return out * x0 + skip * value;
      });
      if (index === timesteps.length - 1) return denoised;
      const fresh = noise();
      return map(denoised, (value, i) => Math.sqrt(alphaPrevious) * value + Math.sqrt(1 - alphaPrevious) * fresh[i]!);
    },
    addNoise: (original, noise, index) => {
      if (index >= timesteps.length) return original;
      const alpha = alphaAt(timesteps[index]!);
      return map(original, (value, i) => Math.sqrt(alpha) * value + Math.sqrt(1 - alpha) * noise[i]!);
    },
  };
}

/** LCM-distilled UNets take guidance as a sinusoidal embedding (`timestep_cond`). */
export function guidanceEmbedding(guidance: number, dimension: number): Float32Array {
  const w = (guidance - 1) * 1000;
  const half = Math.floor(dimension / 2);
  const out = new Float32Array(dimension);
  const factor = Math.log(10000) / Math.max(1, half - 1);
  for (let i = 0; i < half; i++) {
    const angle = w * Math.exp(-factor * i);
    out[i] = Math.sin(angle);
    out[half + i] = Math.cos(angle);
  }
  return out;
}
