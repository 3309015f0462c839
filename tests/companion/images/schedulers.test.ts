import { describe, expect, it } from 'vitest';
import { createSampler, guidanceEmbedding, samplerKind, type SchedulerConfig } from '../../../companion/src/images/sd/schedulers.js';
import { SeededRandom } from '../../../companion/src/images/sd/random.js';

const SD: SchedulerConfig = { num_train_timesteps: 1000, beta_start: 0.00085, beta_end: 0.012, beta_schedule: 'scaled_linear', prediction_type: 'epsilon' };
const values = (...list: number[]) => Float32Array.from(list);

describe('samplers', () => {
  it('pick the sampler from the scheduler class', () => {
    expect(samplerKind({ _class_name: 'EulerAncestralDiscreteScheduler' })).toBe('euler_a');
    expect(samplerKind({ _class_name: 'EulerDiscreteScheduler' })).toBe('euler');
    expect(samplerKind({ _class_name: 'LCMScheduler' })).toBe('lcm');
    expect(samplerKind({ _class_name: 'PNDMScheduler' })).toBe('euler_a');
  });

  it('space timesteps as diffusers does (linspace, leading, trailing) and start from the largest sigma', () => {
    const linspace = createSampler({ ...SD, _class_name: 'EulerAncestralDiscreteScheduler', timestep_spacing: 'linspace' }, 4);
    expect(linspace.timesteps).toEqual([999, 666, 333, 0]);
    // SD 1.x's largest training sigma.
    expect(linspace.initNoiseSigma).toBeCloseTo(14.6146, 3);
    expect(createSampler({ ...SD, timestep_spacing: 'leading', steps_offset: 1 }, 4).timesteps).toEqual([751, 501, 251, 1]);
    expect(createSampler({ ...SD, _class_name: 'EulerDiscreteScheduler', timestep_spacing: 'trailing' }, 1).timesteps).toEqual([999]);
  });

  it('give LCM its four-step schedule', () => {
    const lcm = createSampler({ ...SD, _class_name: 'LCMScheduler', original_inference_steps: 50 }, 4);
    expect(lcm.timesteps).toEqual([999, 759, 499, 259]);
    expect(lcm.initNoiseSigma).toBe(1);
  });

  it('recover the clean sample in one Euler step when the model predicts the noise exactly (SD-Turbo)', () => {
    const sampler = createSampler({ ...SD, _class_name: 'EulerDiscreteScheduler', timestep_spacing: 'trailing' }, 1);
    const clean = values(0.5, -1, 2);
    const noise = values(1, 0.3, -0.7);
    const noisy = sampler.addNoise(clean, noise, 0);
    const next = sampler.step(noise, 0, noisy, () => {
      throw new Error('plain Euler draws no noise');
    });
    next.forEach((value, i) => expect(value).toBeCloseTo(clean[i]!, 4));
  });

  it('recover the clean sample in LCM one-step sampling too', () => {
    const sampler = createSampler({ ...SD, _class_name: 'LCMScheduler' }, 1);
    const clean = values(0.5, -1, 2);
    const noise = values(1, 0.3, -0.7);
    const next = sampler.step(noise, 0, sampler.addNoise(clean, noise, 0), () => new Float32Array(3));
    next.forEach((value, i) => expect(value).toBeCloseTo(clean[i]!, 3));
  });

  it('split an ancestral step into a deterministic part and fresh noise of the right size', () => {
    const sampler = createSampler({ ...SD, _class_name: 'EulerAncestralDiscreteScheduler' }, 10);
    const sample = values(3, -2, 1);
    // With no predicted noise the only change is the fresh noise, scaled by sigma_up.
    const next = sampler.step(new Float32Array(3), 0, sample, () => values(1, 1, 1));
    const up = next[0]! - sample[0]!;
    expect(up).toBeGreaterThan(0);
    next.forEach((value, i) => expect(value - sample[i]!).toBeCloseTo(up, 5));
  });

  it('run only the last steps for image-to-image strength and noise the source to that level', () => {
    const full = createSampler(SD, 10);
    const half = createSampler(SD, 10, 0.5);
    expect(half.timesteps).toEqual(full.timesteps.slice(5));
    const noisy = half.addNoise(values(0), values(1), 0);
    expect(noisy[0]).toBeCloseTo(full.addNoise(values(0), values(1), 5)[0]!, 6);
    expect(half.addNoise(values(7), values(1), half.timesteps.length)[0]).toBe(7);
  });

  it('embed LCM guidance as sines and cosines', () => {
    const embedding = guidanceEmbedding(1, 8);
    expect([...embedding]).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(guidanceEmbedding(8, 256)).toHaveLength(256);
  });
});

describe('seeded random numbers', () => {
  it('repeat for a seed and differ between seeds, with a standard normal spread', () => {
    const a = new SeededRandom(42).normals(20_000);
    expect(new SeededRandom(42).normals(20_000)).toEqual(a);
    expect(new SeededRandom(43).normals(20_000)).not.toEqual(a);
    const mean = a.reduce((sum, value) => sum + value, 0) / a.length;
    const variance = a.reduce((sum, value) => sum + (value - mean) ** 2, 0) / a.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(variance).toBeGreaterThan(0.95);
    expect(variance).toBeLessThan(1.05);
  });
});
