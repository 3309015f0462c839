/** Request-body schema of POST /v1/embeddings: types are checked here, meaning in embeddings.ts. */

/** OpenAI's limit on inputs per request. */
export const MAX_INPUTS = 2048;

export const embeddingBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [
        { type: 'string' },
        { type: 'array', minItems: 1, maxItems: MAX_INPUTS, items: { type: 'string' } },
        // Token arrays pass the type check so that the route can say why they are refused.
        { type: 'array', minItems: 1, items: { type: 'integer' } },
        { type: 'array', minItems: 1, items: { type: 'array', items: { type: 'integer' } } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1 },
    user: { type: 'string' },
  },
} as const;
