import type { Sampling } from '../../inference/types.js';

/** The sampling fields chat completions and legacy completions share, each optional or null. */
interface SamplingFields {
  temperature?: number | null;
  top_p?: number | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
}

/** An OpenAI request's sampling settings as the generation contract names them (null: the model's default). */
export function samplingOf(body: SamplingFields): Sampling {
  return {
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    seed: body.seed ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    frequencyPenalty: body.frequency_penalty ?? undefined,
  };
}
