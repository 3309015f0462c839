/**
 * The sampling both engines use: what a request sets, and for everything it leaves unset the same
 * defaults on either engine (llama.cpp's server and LM Studio use these; node-llama-cpp's own
 * defaults for top-k, top-p and min-p are the same). A new sampling setting is added here, and each
 * engine maps the one resolved set onto its own API.
 */
import type { Sampling } from './types.js';

export interface ResolvedSampling {
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  seed?: number;
  presencePenalty: number;
  frequencyPenalty: number;
  /** The multiplicative repeat penalty (1: none); requests have no field for it. */
  repeatPenalty: number;
}

export const SAMPLING_DEFAULTS: Readonly<Omit<ResolvedSampling, 'seed'>> = {
  temperature: 0.8,
  topP: 0.95,
  topK: 40,
  minP: 0,
  presencePenalty: 0,
  frequencyPenalty: 0,
  repeatPenalty: 1,
};

/** A request's sampling with the defaults filled in. */
export function resolveSampling(sampling: Sampling): ResolvedSampling {
  return {
    temperature: sampling.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: sampling.topP ?? SAMPLING_DEFAULTS.topP,
    topK: SAMPLING_DEFAULTS.topK,
    minP: SAMPLING_DEFAULTS.minP,
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    presencePenalty: sampling.presencePenalty ?? SAMPLING_DEFAULTS.presencePenalty,
    frequencyPenalty: sampling.frequencyPenalty ?? SAMPLING_DEFAULTS.frequencyPenalty,
    repeatPenalty: SAMPLING_DEFAULTS.repeatPenalty,
  };
}
