import { nonEmptyString } from '../schema.js';

/** Schemas of fields several Ollama routes share. */

/** `options`: the sampling settings Hearth reads (others Ollama knows pass unchecked and are ignored). */
export const optionsSchema = {
  type: 'object',
  properties: {
    temperature: { type: 'number', minimum: 0 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer' },
    num_predict: { type: 'integer' },
    num_ctx: { type: 'integer' },
    stop: { type: 'array', items: { type: 'string' } },
    seed: { type: 'integer' },
    presence_penalty: { type: 'number' },
    frequency_penalty: { type: 'number' },
  },
} as const;

/** "json", a JSON schema, or "" (plain text). */
export const formatSchema = { anyOf: [{ enum: ['json', ''] }, { type: 'object' }] } as const;

/** Seconds, or a duration ("5m"); its meaning is read in keep-alive.ts. */
export const keepAliveSchema = { anyOf: [{ type: 'string' }, { type: 'number' }] } as const;

export const thinkSchema = { anyOf: [{ type: 'boolean' }, { enum: ['low', 'medium', 'high'] }] } as const;

/** The model a body names (/api/show, /api/pull): `model`, or `name`, the field's older spelling that clients still send. */
export const modelOrName = { model: nonEmptyString(), name: nonEmptyString() } as const;
