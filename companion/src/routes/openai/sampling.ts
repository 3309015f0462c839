import type { Sampling } from '../../inference/types.js';
import type { OpenaiSampling } from '#shared/api/openai.js';
import { nonEmptyString, nullableNumber } from '../schema.js';

/** The schema of the sampling fields chat completions and legacy completions share. */
export const samplingSchema = {
  temperature: nullableNumber(0, 2),
  top_p: nullableNumber(0, 1),
  seed: { type: ['integer', 'null'] },
  stop: { anyOf: [{ type: 'string' }, { type: 'array', items: nonEmptyString(), maxItems: 4 }, { type: 'null' }] },
  presence_penalty: nullableNumber(-2, 2),
  frequency_penalty: nullableNumber(-2, 2),
} as const;

/** An OpenAI request's sampling settings as the generation contract names them (null: the model's default). */
export function samplingOf(body: OpenaiSampling): Sampling {
  return {
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    seed: body.seed ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    frequencyPenalty: body.frequency_penalty ?? undefined,
  };
}
